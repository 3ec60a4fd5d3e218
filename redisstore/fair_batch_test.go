package redisstore

import (
	"context"
	"slices"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestBatchReadsTheFrontAsTaken: a batch takes the window's callers in
// the front's order as it is taken, not the queue's as last sorted.
// Tenants a (of weight 2) and b arrive a1 b1 a2 b2 a3 behind a leader of
// a higher priority, and the front orders them a1 b1 a2 a3 b2 (finishes
// 1/2, 1, 1, 3/2, 2). The last call's answer makes the leader lead the
// next; before it takes its batch, a1 gives up, which gives a2 a1's
// finish: the front's order is then a2 b1 a3 b2, and so is the batch's.
// (The batch read the queue as last sorted, at the arrivals and the
// run's end: b1 a2 a3 b2, and the script gave b1 the departure the front
// grants a2 first.) No Redis: the batch is read where it is taken.
func TestBatchReadsTheFrontAsTaken(t *testing.T) {
	g := &group{clock: clock.NewMock()}
	g.mu.Lock()
	defer g.mu.Unlock()
	win := g.windowLocked("k")
	f := &flight{key: "k"}
	win.flight = f // a call in flight: the callers queue
	names := map[*pending]string{}
	ask := func(name string, ctx context.Context) *pending {
		p := &pending{ctx: ctx, req: request{n: 1, departs: true}, prio: rxthrottle.PriorityFrom(ctx), done: make(chan struct{})}
		g.fairArriveLocked(win, p)
		f.queue = insertByPriority(f.queue, p)
		g.fairBumpLocked("k", f, nil)
		names[p] = name
		return p
	}
	weight := map[string]float64{"a": 2, "b": 1, "c": 1}
	tenant := func(key string) context.Context {
		return rxthrottle.WithTenant(context.Background(), key, weight[key])
	}
	lead := ask("lead", rxthrottle.WithPriority(tenant("c"), 1))
	a1 := ask("a1", tenant("a"))
	ask("b1", tenant("b"))
	ask("a2", tenant("a"))
	ask("b2", tenant("b"))
	ask("a3", tenant("a"))
	order := func(q []*pending) (s []string) {
		for _, p := range q {
			s = append(s, names[p])
		}
		return s
	}
	require.Equal(t, []string{"lead", "a1", "b1", "a2", "a3", "b2"}, order(f.queue))

	// The last call's answer makes lead the next leader (run).
	f.queue = slices.DeleteFunc(f.queue, func(p *pending) bool { return p == lead })
	// a1 gives up while queued (await).
	f.queue = slices.DeleteFunc(f.queue, func(p *pending) bool { return p == a1 })
	g.fairLeaveLocked("k", a1, false)

	batch, in := g.takeBatchLocked(f, lead)
	require.True(t, in)
	require.Equal(t, []string{"lead", "a2", "b1", "a3", "b2"}, order(batch), "the front's order as the batch is taken")
	require.Empty(t, f.queue)
}

// TestAllowGoesByPriorityThenArrival: an Allow's admission goes behind
// the callers of its priority queued before it and ahead of the later
// ones, whatever their tenants. Tenant a's a1 a2 a3 queue, then an Allow
// (x), then b1 of tenant b, whom the front puts second: a1 b1 a2 a3. The
// Allow goes behind a3, which queued before it: a1 b1 a2 a3 x. (It kept
// its fifth place among the asks' sorted places: a1 b1 a2 x a3, ahead of
// a3.) A caller of a higher priority arriving later (hi) goes ahead of
// it, and one of its priority arriving later (a4) behind it. No Redis.
func TestAllowGoesByPriorityThenArrival(t *testing.T) {
	g := &group{clock: clock.NewMock()}
	g.mu.Lock()
	defer g.mu.Unlock()
	win := g.windowLocked("k")
	f := &flight{key: "k"}
	win.flight = f // a call in flight: the callers queue
	names := map[*pending]string{}
	arrive := func(name string, ctx context.Context, departs bool) {
		p := &pending{ctx: ctx, req: request{n: 1, departs: departs}, prio: rxthrottle.PriorityFrom(ctx), done: make(chan struct{})}
		g.fairArriveLocked(win, p)
		p.allow = p.fair == nil
		g.queueLocked(f, p)
		g.fairBumpLocked("k", f, nil)
		names[p] = name
	}
	tenant := func(key string) context.Context {
		return rxthrottle.WithTenant(context.Background(), key, 1)
	}
	order := func() (s []string) {
		for _, p := range f.queue {
			s = append(s, names[p])
		}
		return s
	}
	arrive("a1", tenant("a"), true)
	arrive("a2", tenant("a"), true)
	arrive("a3", tenant("a"), true)
	arrive("x", tenant("a"), false)
	require.Equal(t, []string{"a1", "a2", "a3", "x"}, order())
	arrive("b1", tenant("b"), true)
	require.Equal(t, []string{"a1", "b1", "a2", "a3", "x"}, order(), "x behind the callers queued before it")
	arrive("hi", rxthrottle.WithPriority(tenant("b"), 1), true)
	arrive("a4", tenant("a"), true)
	require.Equal(t, []string{"hi", "a1", "b1", "a2", "a3", "x", "a4"}, order())
}
