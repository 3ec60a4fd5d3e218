package redisstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// TestLeaseFairOrder: the tokens of a lease go to the callers waiting in
// the pool in SPEC.md's order (internal/fairq): a higher priority first,
// then the tenants by their shares (weights), FIFO within a tenant. Here
// A's six callers queued before B's three and C's two (C's of weight 2),
// and a caller of priority 1 came last: it goes first, then the tenants
// alternate by their virtual finishes. The pool used to hand the tokens
// out by priority, then arrival: every A before B.
func TestLeaseFairOrder(t *testing.T) {
	p := &leasePool{}
	p.waiters.p = p
	type caller struct {
		name string
		w    *front.Waiter
	}
	var cs []*caller
	add := func(name, tenant string, weight float64, prio, k int) {
		for i := range k {
			c := &caller{name: fmt.Sprintf("%s%d", name, i+1)}
			c.w = front.NewWaiter(0, 1, 0, fairq.Caller{Prio: prio, Tenant: tenant, Weight: weight, Cost: 1})
			p.waiters.front.Push(c.w)
			cs = append(cs, c)
		}
	}
	add("A", "a", 1, 0, 6)
	add("B", "b", 1, 0, 3)
	add("C", "c", 2, 0, 2)
	add("P", "a", 1, 1, 1)
	require.Equal(t, len(cs), p.waiters.front.Cost())
	l := &lease{id: 1}
	for j := 1; j <= len(cs); j++ {
		p.avail = append(p.avail, leasedToken{l: l, j: j})
	}
	require.True(t, p.handOutLocked())
	got := make([]string, len(cs))
	for _, c := range cs {
		select {
		case <-c.w.Ready:
		default:
			t.Fatalf("%s not served", c.name)
		}
		toks := p.takeGrantedLocked(c.w)
		require.Len(t, toks, 1)
		got[toks[0].j-1] = c.name
	}
	// Finishes: A_i at i, B_i at i, C_i at i/2; ties go by arrival.
	require.Equal(t, []string{"P1", "C1", "A1", "B1", "C2", "A2", "B2", "A3", "B3", "A4", "A5", "A6"}, got)
	require.Zero(t, p.waiters.len())
	require.Zero(t, p.waiters.front.Cost())
}

// TestLeaseFairPartial: a lease too small for the first caller waiting
// serves nobody behind it (no caller overtakes the one the fair order puts
// first), and a withdrawn caller leaves no trace in the order.
func TestLeaseFairPartial(t *testing.T) {
	p := &leasePool{}
	p.waiters.p = p
	push := func(tenant string, n int) *front.Waiter {
		w := front.NewWaiter(0, n, 0, fairq.Caller{Tenant: tenant, Cost: n})
		p.waiters.front.Push(w)
		return w
	}
	a, b, c := push("a", 1), push("b", 3), push("a", 1)
	p.withdrawLocked(a)
	l := &lease{id: 1}
	p.avail = []leasedToken{{l, 1}, {l, 2}}
	// b (finish 3) and c (finish 1, a's first caller now): c goes first,
	// then b needs 3 of the 1 left.
	require.False(t, p.handOutLocked())
	require.Len(t, p.takeGrantedLocked(c), 1)
	require.Nil(t, p.takeGrantedLocked(b))
	require.Equal(t, b, p.waiters.first())
	require.Equal(t, 3, p.waiters.front.Cost())
}

// TestLeaseTenantsShare: callers of two tenants wait in the pool behind a
// caller on the normal path (H, blocked by X's holds): A's six, then B's
// three. When H is done, one lease serves them all, its tokens handed out
// A1 B1 A2 B2 A3 B3 A4 A5 A6 (equal weights): A's Waits get tokens 1, 3,
// 5, 7, 8 and 9 of the lease (B's Acquires take the others). The pool
// used to hand them out in arrival order: 1 to 6 to A.
func TestLeaseTenantsShare(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(100, 100*time.Millisecond), WithLease(0), WithTimeout(suiteTimeout))
	var mu sync.Mutex
	var js []int                                                          // the tokens A's Waits took, by their index in the lease
	b.pool.used = func(_, _ int64, j int, _ int64) { js = append(js, j) } // under the pool's lock
	ctx := context.Background()
	x, err := b.AcquireN(ctx, 100)
	require.NoError(t, err)
	queued := b.Stats().Queued
	arrive := func(f func()) { // starts f, and waits until its caller waits
		go f()
		queued++
		redistest.WaitFor(t, "a caller to wait", func() error {
			if q := b.Stats().Queued; q < queued {
				return fmt.Errorf("queued %d, want %d", q, queued)
			}
			return nil
		})
	}
	var wg sync.WaitGroup
	wg.Add(10)
	arrive(func() { defer wg.Done(); require.NoError(t, b.Wait(rxthrottle.WithTenant(ctx, "h", 1))) })
	// H leaves the pool for the normal path (no lease can serve it) before
	// A's callers come: had it left after them, it would have been served
	// in their lane first, and B's finishes start later.
	redistest.WaitFor(t, "H on the normal path", func() error {
		b.pool.mu.Lock()
		defer b.pool.mu.Unlock()
		if b.pool.normal != 1 || b.pool.waiters.len() != 0 {
			return fmt.Errorf("normal %d, waiting %d", b.pool.normal, b.pool.waiters.len())
		}
		return nil
	})
	for range 6 {
		arrive(func() { defer wg.Done(); require.NoError(t, b.Wait(rxthrottle.WithTenant(ctx, "a", 1))) })
	}
	var toks []rxthrottle.Token
	for range 3 {
		arrive(func() {
			defer wg.Done()
			tok, err := b.Acquire(rxthrottle.WithTenant(ctx, "b", 1))
			require.NoError(t, err)
			mu.Lock()
			toks = append(toks, tok)
			mu.Unlock()
		})
	}
	x.Release()
	wg.Wait()
	for _, tok := range toks {
		tok.Release()
	}
	require.EqualValues(t, 9, b.Leased(), "A's and B's callers from one lease")
	b.pool.mu.Lock()
	got := slices.Sorted(slices.Values(js))
	b.pool.mu.Unlock()
	require.Equal(t, []int{1, 3, 5, 7, 8, 9}, got)
	require.NoError(t, b.Close())
}

// TestLeaseFairWithTheNormalPath: the pool's waiters and its callers on
// the normal path are one fair order (SPEC.md, "Fair shares"), each
// charged at its departure. limitertest's scenario on Per(1, 500ms) with
// leases: A1 takes the token from a lease, A2 finds none to be had and
// takes the normal path (its departure a window later), A3 and A4 wait
// in the pool behind it; then B's three (weight 2) and C1 come. B1's
// finish (1/2) is below A2's (1): B1 goes first, taking A2's departure,
// and the others follow SPEC's order: A's go at 0, 2W, 6W and 7W. The
// pool charged A2 when it sent it to the normal path and kept B1 behind
// it: A's went at 0, W, 3W and 7W (A1 A2 B1 A3 B2 C1 B3 A4).
func TestLeaseFairWithTheNormalPath(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(1, 500*time.Millisecond), WithLease(0), WithTimeout(suiteTimeout))
	ctx := context.Background()
	wait := func(tenant string, weight float64) func() error {
		return func() error { return b.Wait(rxthrottle.WithTenant(ctx, tenant, weight)) }
	}
	require.NoError(t, wait("a", 1)())
	o := &leaseOrder{t: t, b: b, order: []string{"A1"}}
	o.start("A2", wait("a", 1))
	o.onNormalPath(1)
	o.start("A3", wait("a", 1))
	o.start("A4", wait("a", 1))
	for i := range 3 {
		o.start(fmt.Sprint("B", i+1), wait("b", 2))
	}
	o.start("C1", wait("c", 1))
	require.Equal(t, []string{"A1", "B1", "A2", "B2", "C1", "B3", "A3", "A4"}, o.done())
	require.NoError(t, b.Close())
}

// TestLeaseOrderAcrossTheNormalPath: TestLeaseFairWithTheNormalPath's
// order, step by step in the pool's queue, without Redis: A2 on the
// normal path keeps its place until its departure (leave, served), B1
// arriving is put before it (ahead: it goes there too), B2 and C1 wait
// behind it, and the waiters left go in SPEC.md's order.
func TestLeaseOrderAcrossTheNormalPath(t *testing.T) {
	p := &leasePool{}
	p.waiters.p = p
	ws := &p.waiters
	named := map[*front.Waiter]string{}
	add := func(name, tenant string, weight float64, normal bool) *front.Waiter {
		w := front.NewWaiter(0, 1, 0, fairq.Caller{Tenant: tenant, Weight: weight, Cost: 1})
		named[w] = name
		ws.front.Push(w)
		if normal {
			p.toNormalLocked(w)
		}
		return w
	}
	names := func(w []*front.Waiter) []string {
		var out []string
		for _, x := range w {
			out = append(out, named[x])
		}
		return out
	}
	a2 := add("A2", "a", 1, true)
	add("A3", "a", 1, false)
	add("A4", "a", 1, false)
	require.Empty(t, ws.ahead(), "one tenant: nobody walks, nobody goes first")
	b1 := add("B1", "b", 2, false)
	require.Equal(t, []string{"B1"}, names(ws.ahead()))
	p.sendLocked(b1)
	add("B2", "b", 2, false)
	add("B3", "b", 2, false)
	add("C1", "c", 1, false)
	require.Empty(t, ws.ahead())
	require.Equal(t, 5, ws.len())
	require.Equal(t, 2, p.normal)
	ws.leave(b1, true)
	require.Empty(t, ws.ahead())
	ws.leave(a2, true)
	require.Zero(t, p.normal)
	var got []string
	for w := ws.first(); w != nil; w = ws.first() {
		got = append(got, named[w])
		p.avail = []leasedToken{{&lease{}, 1}}
		ws.front.Dispatch(p.planner(), 0)
		p.takeGrantedLocked(w)
	}
	require.Equal(t, []string{"B2", "C1", "B3", "A3", "A4"}, got)
	require.Zero(t, ws.front.Waiting())
	require.Zero(t, ws.front.Cost())
}
