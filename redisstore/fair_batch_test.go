package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
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
	order, g := q.order, q.g
	require.Equal(t, []string{"lead", "a1", "b1", "a2", "a3", "b2"}, q.queue())

	// The last call's answer makes lead the next leader (run), in its
	// place.
	require.Same(t, lead, q.elect())
	// a1 gives up while queued (await).
	q.giveUp(a1)

	batch, in := g.takeBatchLocked(q.win, lead, false)
	require.True(t, in)
	require.Equal(t, []string{"lead", "a2", "b1", "a3", "b2"}, order(batch), "the front's order as the batch is taken")
	require.Zero(t, q.win.queuedLocked())
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
	order := q.queue
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
	q.g.queueLocked(q.win, p)
	if p.fair != nil {
		q.g.fairBumpLocked(q.win)
	}
	q.names[p] = name
	return p
}

// order returns the names of ps (a withdrawal's: "-" and the name of the
// caller it withdraws).
func (q *queueing) order(ps []*pending) (s []string) {
	for _, p := range ps {
		name, ok := q.names[p]
		if !ok && p.req.how == "withdraw" {
			for w, n := range q.names {
				if w.res.id == p.req.id {
					name = "-" + n
				}
			}
		}
		s = append(s, name)
	}
	return s
}

// all returns the window's front in its order, nil while FIFO (as
// fairBumpLocked does).
func (q *queueing) all() []*front.Waiter {
	if q.win.front.FIFO() {
		return nil
	}
	return q.win.front.All()
}

// queue returns the names of the next batch, as it would be taken now.
func (q *queueing) queue() []string { return q.order(q.win.batchLocked(q.all(), 1<<20)) }

// elect elects the next leader as a run's end does, and returns it.
func (q *queueing) elect() *pending {
	p := q.win.leaderLocked(q.all())
	p.lead = true
	return p
}

// giveUp takes p out of the queue as await does when its caller gives up.
func (q *queueing) giveUp(p *pending) {
	if q.win.unqueueLocked(p) {
		q.g.fairLeaveLocked("k", p, false)
	}
}

// depart takes p, queued, as a batch does, and gives it a departure an
// hour ahead.
func (q *queueing) depart(p *pending, id int64) {
	q.win.unqueueLocked(p)
	p.res = admission{admitted: true, e: 2, now: 1, id: id}
	p.res.dep = q.g.departLocked("k", p, offsetOf(q.g.clock.Now())+int64(time.Hour))
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
	g := q.g
	tenant := func(key string) context.Context {
		return rxthrottle.WithTenant(context.Background(), key, 1)
	}
	a0 := q.arrive("a0", tenant("a"), true)
	q.depart(a0, 1)
	q.arrive("a1", tenant("a"), true)
	b1 := q.arrive("b1", tenant("b"), true)
	require.Equal(t, []string{"b1", "a1"}, q.queue())
	require.Same(t, b1, q.elect())    // the next leader (run)
	g.fairLeaveLocked("k", a0, false) // a0 gives up
	batch, in := g.takeBatchLocked(q.win, b1, false)
	require.True(t, in)
	require.Equal(t, []string{"a1", "b1"}, q.order(batch))
}

// TestBumpWithdrawalsGoFirst: the withdrawal of a departure that a caller
// of a higher priority takes goes ahead of that caller in the script run,
// as every end does, so that it is scheduled without the reservation
// withdrawn (tail.lua). lo holds a departure; hi (priority 1) arrives and
// takes it: the batch is lo's withdrawal, hi, lo asking again. (The
// withdrawal had priority 0 and went behind hi, who then departed after
// lo's reservation, a window later than it could.) No Redis.
func TestBumpWithdrawalsGoFirst(t *testing.T) {
	q := newQueueing()
	defer q.g.mu.Unlock()
	lo := q.arrive("lo", context.Background(), true)
	q.depart(lo, 7)
	q.arrive("hi", rxthrottle.WithPriority(context.Background(), 1), true)
	again := lo.res.dep.again
	require.NotNil(t, again, "hi takes lo's departure")
	q.names[again] = "lo"
	batch := q.win.nextBatchLocked(q.all(), maxBatch)
	require.Equal(t, []string{"-lo", "hi", "lo"}, q.order(batch))
	require.Zero(t, q.win.queuedLocked())
}
