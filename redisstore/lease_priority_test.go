package redisstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// leaseOrder starts callers on a Bucket with leases and keeps the order in
// which they return.
type leaseOrder struct {
	t     *testing.T
	b     *Bucket
	mu    sync.Mutex
	order []string
	wg    sync.WaitGroup
	n     int // the callers started (each one waits before the next)
}

// start runs f as the caller name, and returns once it waits.
func (o *leaseOrder) start(name string, f func() error) {
	o.wg.Go(func() {
		if err := f(); err != nil {
			o.t.Error(name, err)
		}
		o.mu.Lock()
		o.order = append(o.order, name)
		o.mu.Unlock()
	})
	o.n++
	redistest.WaitFor(o.t, name+" to wait", func() error {
		if q := o.b.Stats().Queued; q < o.n {
			return fmt.Errorf("queued %d, want %d", q, o.n)
		}
		return nil
	})
}

// onNormalPath waits until k callers of the pool are on the normal path
// and none waits in the pool.
func (o *leaseOrder) onNormalPath(k int) {
	p := o.b.pool
	redistest.WaitFor(o.t, "the normal path", func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.normal != k || p.waiters.len() != 0 {
			return fmt.Errorf("normal %d, waiting %d", p.normal, p.waiters.len())
		}
		return nil
	})
}

// done waits for every caller, and returns their order.
func (o *leaseOrder) done() []string {
	o.wg.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.order
}

// TestLeasePriorityOverTheNormalPath: on Per(1, 500ms) with leases, X
// holds the token (from a lease), L (priority -1) finds no lease to be had
// and takes the normal path (blocked by X's hold), then H (priority 1) and
// M (0) come: they go before L, as on the normal path alone (SPEC.md,
// "Priorities"). They used to wait in the pool behind L whatever their
// priority: L went a window before H.
func TestLeasePriorityOverTheNormalPath(t *testing.T) {
	// Their departures a window apart: the order their Waits return in
	// is theirs, but for a stall of half a second.
	b, _ := newTestBucket(t, rxthrottle.Per(1, 500*time.Millisecond), WithLease(0), WithTimeout(suiteTimeout))
	ctx := context.Background()
	x, err := b.Acquire(ctx)
	require.NoError(t, err)
	o := &leaseOrder{t: t, b: b}
	wait := func(prio int) func() error {
		return func() error { return b.Wait(rxthrottle.WithPriority(ctx, prio)) }
	}
	o.start("L", wait(-1))
	o.onNormalPath(1)
	o.start("H", wait(1))
	o.start("M", wait(0))
	x.Release()
	require.Equal(t, []string{"H", "M", "L"}, o.done())
	require.NoError(t, b.Close())
}

// TestLeaseWaitersFollowALowerPriority: on Per(2, 500ms) with leases, X
// holds both tokens (AcquireN, on the normal path), Z (priority 0) takes
// the normal path behind it and W (0) waits in the pool behind Z; then Y
// (AcquireN of 2, priority -1) takes the normal path: W goes there too,
// ahead of Y (SPEC.md, "Priorities"), and gets the token that Z leaves
// when X's come back. W used to wait in the pool until Y was done, a
// window after Z.
func TestLeaseWaitersFollowALowerPriority(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(2, 500*time.Millisecond), WithLease(0), WithTimeout(suiteTimeout))
	ctx := context.Background()
	x, err := b.AcquireN(ctx, 2)
	require.NoError(t, err)
	o := &leaseOrder{t: t, b: b}
	o.start("Z", func() error { return b.Wait(ctx) })
	o.onNormalPath(1)
	o.start("W", func() error { return b.Wait(ctx) })
	o.start("Y", func() error {
		tok, err := b.AcquireN(rxthrottle.WithPriority(ctx, -1), 2)
		tok.Release()
		return err
	})
	x.Release()
	got := o.done()
	require.Equal(t, "Y", got[2], "order %v", got)
	require.NoError(t, b.Close())
}

// TestLeaseQueueBoundBeforePriority: with WithMaxQueue(2) on Per(1, 500ms)
// with leases, X holds the token, L waits on the normal path and W in the
// pool behind it: H, of a higher priority, would wait while two wait, and
// is refused (SPEC.md, "Queue bound"). Sent to the normal path first, it
// was counted against L alone there and waited, a third. H comes once L
// counts as waiting there, which it does when Redis answers it blocked:
// before that (on a loaded machine, L's round trip outlasting W's start)
// one waits, and H waited too, to its deadline.
func TestLeaseQueueBoundBeforePriority(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(1, 500*time.Millisecond), WithLease(0), WithTimeout(suiteTimeout), rxthrottle.WithMaxQueue(2))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x, err := b.Acquire(ctx)
	require.NoError(t, err)
	o := &leaseOrder{t: t, b: b}
	o.start("L", func() error { return ignoreCancel(b.Wait(ctx)) })
	o.onNormalPath(1)
	redistest.WaitFor(t, "L to wait on the normal path", func() error {
		if n := b.s.group.waitingOn(b.keys[0]); n != 1 {
			return fmt.Errorf("%d waiting there, want 1", n)
		}
		return nil
	})
	o.start("W", func() error { return ignoreCancel(b.Wait(ctx)) })
	hctx, stop := context.WithTimeout(rxthrottle.WithPriority(ctx, 1), 5*time.Second)
	defer stop()
	require.ErrorIs(t, b.Wait(hctx), rxthrottle.ErrQueueFull)
	cancel()
	o.done()
	x.Cancel()
	require.NoError(t, b.Close())
}
