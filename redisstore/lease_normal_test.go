package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// TestLeaseWaitsBehindTheNormalPath: on Per(3, 50ms) with leases, X holds
// 2 tokens (AcquireN takes the normal path), C asks for 2 more (AcquireN:
// on the normal path, blocked by X's holds) and D, arriving after C, for 1
// (Wait): D waits in the pool behind C, and once C is done, a lease serves
// D. The pool used to send D to the normal path too (it followed C there),
// so that callers in a loop kept the pool from leasing for as long as one
// of them was there.
func TestLeaseWaitsBehindTheNormalPath(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(3, 50*time.Millisecond), WithLease(0), WithTimeout(suiteTimeout))
	ctx := context.Background()
	x, err := b.AcquireN(ctx, 2)
	require.NoError(t, err)
	queued := func(n int) {
		redistest.WaitFor(t, "callers to wait", func() error {
			if q := b.Stats().Queued; q < n {
				return fmt.Errorf("queued %d, want %d", q, n)
			}
			return nil
		})
	}
	acquired := make(chan rxthrottle.Token, 1)
	go func() {
		tok, err := b.AcquireN(ctx, 2)
		if err != nil {
			t.Error(err)
		}
		acquired <- tok
	}()
	queued(1)
	waited := make(chan error, 1)
	go func() { waited <- b.Wait(ctx) }()
	queued(2)
	x.Release()
	c := <-acquired
	require.NoError(t, <-waited)
	c.Release()
	require.EqualValues(t, 1, b.Leased(), "the Wait was not served by a lease")
	require.NoError(t, b.Close())
}

// TestLeaseAgainAfterAPause: goroutines that call Wait in a loop, sent to
// the normal path by a Pause, are served from leases again after it. They
// used to follow one another there for as long as they looped: one of
// them was always on it, and the pool leased nothing while one was. With
// two priorities among them (a caller of a higher priority than one on
// the normal path follows it there), the same.
func TestLeaseAgainAfterAPause(t *testing.T) {
	for _, prios := range []int{1, 2} {
		t.Run(fmt.Sprintf("priorities=%d", prios), func(t *testing.T) { testLeaseAgainAfterAPause(t, prios) })
	}
}

func testLeaseAgainAfterAPause(t *testing.T, prios int) {
	b, _ := newTestBucket(t, rxthrottle.Per(1<<30, time.Millisecond), WithLease(0), WithTimeout(suiteTimeout))
	var n atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range 8 {
		ctx := rxthrottle.WithPriority(context.Background(), i%prios)
		wg.Go(func() {
			for !stop.Load() {
				if err := b.Wait(ctx); err != nil {
					t.Error(err)
					return
				}
				n.Add(1)
			}
		})
	}
	admissions := func(k int64) { // waits for k more admissions
		end := n.Load() + k
		redistest.WaitFor(t, "admissions", func() error {
			if got := n.Load(); got < end {
				return fmt.Errorf("%d of %d", got, end)
			}
			return nil
		})
	}
	admissions(800)
	until := time.Now().Add(5 * time.Millisecond)
	b.Pause(until) // the callers go to the normal path, which waits for it
	time.Sleep(time.Until(until))
	admissions(800) // after the pause
	before := b.Leased()
	admissions(4000)
	stop.Store(true)
	wg.Wait()
	t.Logf("leased %d of the admissions after the pause", b.Leased()-before)
	require.Greater(t, b.Leased(), before, "no lease after the pause")
	require.NoError(t, b.Close())
}

// TestLeaseDeadlineBehindTheNormalPath: on Per(1, 10s) with leases, X
// holds the token (from a lease) and L takes the normal path, blocked by
// it; then D, whose deadline is 5s away, waits in the pool behind L: it is
// refused with rxthrottle.ErrDeadline (the earliest it could go is a
// window after now, X released at once), as on the normal path (SPEC.md,
// "Deadlines"), while E, whose deadline is a minute away, is not: it
// waits until its context is cancelled. D used to wait in the pool until
// its context ended (context.DeadlineExceeded, not ErrDeadline).
func TestLeaseDeadlineBehindTheNormalPath(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(1, 10*time.Second), WithLease(0), WithTimeout(suiteTimeout))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x, err := b.Acquire(ctx)
	require.NoError(t, err)
	o := &leaseOrder{t: t, b: b}
	o.start("L", func() error { return ignoreCancel(b.Wait(ctx)) })
	o.onNormalPath(1)
	var errE error
	o.start("E", func() error {
		ctx, stop := context.WithTimeout(ctx, time.Minute)
		defer stop()
		errE = b.Wait(ctx)
		return nil
	})
	dctx, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	err = b.Wait(dctx)
	require.ErrorIs(t, err, rxthrottle.ErrDeadline, "D: %v", err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualValues(t, 1, b.Stats().Cancelled, "D, refused")
	cancel()
	o.done()
	require.ErrorIs(t, errE, context.Canceled, "E")
	x.Cancel()
	require.NoError(t, b.Close())
}

// ignoreCancel is err, or nil for a cancelled context's error.
func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
