package redisstore

import (
	"context"
	"slices"
	"testing"
	"time"

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
	q := newQueueing()
	defer q.g.mu.Unlock()
	ask := func(name string, ctx context.Context) *pending { return q.arrive(name, ctx, true) }
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
	order, f, g := q.order, q.f, q.g
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
	q := newQueueing()
	defer q.g.mu.Unlock()
	arrive := func(name string, ctx context.Context, departs bool) { q.arrive(name, ctx, departs) }
	tenant := func(key string) context.Context {
		return rxthrottle.WithTenant(context.Background(), key, 1)
	}
	order := func() []string { return q.order(q.f.queue) }
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

// queueing is a group with a call in flight on the schedule "k", whose
// callers queue as commit queues them, each named; no Redis. newQueueing
// returns it with its group's mu held.
type queueing struct {
	g     *group
	win   *window
	f     *flight
	names map[*pending]string
}

func newQueueing() *queueing {
	g := &group{clock: clock.NewMock()}
	g.mu.Lock()
	q := &queueing{g: g, win: g.windowLocked("k"), f: &flight{key: "k"}, names: map[*pending]string{}}
	q.win.flight = q.f // a call in flight: the callers queue
	return q
}

// arrive queues the caller name of ctx as commit does: a Wait's ask if
// departs, else an Allow's admission.
func (q *queueing) arrive(name string, ctx context.Context, departs bool) *pending {
	p := &pending{ctx: ctx, req: request{n: 1, departs: departs}, prio: rxthrottle.PriorityFrom(ctx), done: make(chan struct{})}
	q.g.fairArriveLocked(q.win, p)
	p.allow = p.fair == nil
	q.g.queueLocked(q.f, p)
	q.g.fairBumpLocked("k", q.f, nil)
	q.names[p] = name
	return p
}

// order returns the names of ps.
func (q *queueing) order(ps []*pending) (s []string) {
	for _, p := range ps {
		s = append(s, q.names[p])
	}
	return s
}

// TestBatchPutsItsLeaderInTheFrontsOrder: the leader of a batch goes in
// its place in the front's order as the batch is taken, too. a0 holds a
// departure, a1 of its tenant queues behind it, b1 ahead of a1: the last
// call's answer makes b1 the leader. a0 gives up, which gives a1 its
// finish, a tie with b1 that a1's earlier arrival wins: the batch is
// a1 b1 (the leader went first of its priority: b1 a1).
func TestBatchPutsItsLeaderInTheFrontsOrder(t *testing.T) {
	q := newQueueing()
	defer q.g.mu.Unlock()
	g, f := q.g, q.f
	tenant := func(key string) context.Context {
		return rxthrottle.WithTenant(context.Background(), key, 1)
	}
	a0 := q.arrive("a0", tenant("a"), true)
	f.queue = slices.DeleteFunc(f.queue, func(p *pending) bool { return p == a0 })
	a0.res = admission{admitted: true, e: 2, now: 1}
	a0.res.dep = g.departLocked("k", a0, offsetOf(g.clock.Now())+int64(time.Hour))
	q.arrive("a1", tenant("a"), true)
	b1 := q.arrive("b1", tenant("b"), true)
	require.Equal(t, []string{"b1", "a1"}, q.order(f.queue))
	f.queue = slices.DeleteFunc(f.queue, func(p *pending) bool { return p == b1 }) // the next leader (run)
	g.fairLeaveLocked("k", a0, false)                                              // a0 gives up
	batch, in := g.takeBatchLocked(f, b1)
	require.True(t, in)
	require.Equal(t, []string{"a1", "b1"}, q.order(batch))
}
