package redisstore

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// maxBatch bounds the admissions one script run takes, so that a long
// queue cannot hold Redis (single-threaded) for long; the rest go in the
// next run.
const maxBatch = 64

// group is group commit: the admissions of one process's callers of one
// schedule (a Bucket, or one key of a Keyed limiter) that queue while a
// call to Redis is in flight go together in the next call, one script run
// that admits them in their local arrival order. Nobody waits for a batch
// to fill: a caller that finds no call in flight sends its own at once;
// the callers that arrive meanwhile queue, and when the call returns the
// first of them (the new leader) sends the whole queue, as it is when the
// new leader runs (up to maxBatch). There is no timer.
//
// Batches of different processes interleave in the order Redis runs them,
// so the shared schedule is SPEC.md's with the arrival order "batches in
// script order, admissions in batch order".
//
// A call is never cut short by a caller giving up: a caller whose context
// can end (or whose wait the call timeout bounds, on a client that does
// not honour a context's deadline on the socket) leads its call from a
// goroutine of its own (run), and waits for the answer, its context and
// the timeout, whichever comes first. So the answer always comes back to
// the group, and an admission whose caller is gone by then (or that it
// could not use before its deadline) is withdrawn in the very next
// script run, ahead of anything queued: the schedule is as if it had
// never been made (SPEC.md, "Cancellation").
type group struct {
	mu sync.Mutex
	// clock is the limiter's: the windows' fronts read their departures
	// and arm their timers on it (group_planner.go).
	clock clock.Clock
	// entries numbers the operations as they enter the queue for the
	// next batch (pending.queued).
	entries uint64
	// windows are each schedule's call in flight and callers waiting for
	// the window, with the departures given them that they have not
	// reached, by the schedule's first key; present while a call is in
	// flight or any caller waits (group_planner.go).
	windows map[string]*window
	// spare is the last window forgotten, kept for the next one made:
	// a schedule whose callers go at once, one at a time, makes none.
	spare *window
	// handedOver, if set (by tests only), runs when a call's answers and
	// the next lead have been handed over.
	handedOver func()
}

// flight is one schedule's call in flight, with the queue of the ends
// and Allow's admissions waiting for the next call (the asks of Wait and
// Acquire wait in the schedule's window: group_batch.go); requires
// group.mu.
type flight struct {
	key   string // the schedule's first key
	queue []*pending
}

// pending is one operation in a group: a caller's, or a withdrawal that
// the group makes itself (ctx and done nil).
type pending struct {
	ctx  context.Context // the caller's: an answer that comes after it ended is withdrawn
	req  request
	prio int           // the caller's priority (rxthrottle.WithPriority); ends go first
	done chan struct{} // closed when res and err are set, or when lead is
	res  admission
	err  error
	// lead: the caller is the next leader: it takes the queue as it is
	// when it runs (the callers answered by the last call that asked
	// again meanwhile included) and sends it (requires group.mu until
	// done is closed).
	lead bool
	// again: the admission is sent again in the next script run (run;
	// requires group.mu).
	again bool
	// abandoned: the caller stopped waiting (its context ended, or the
	// call timeout passed) while its admission was in flight; the answer
	// is withdrawn if it admitted anything (requires group.mu).
	abandoned bool
	// fair is its caller's place in the schedule's fair queue, for a
	// Wait's or Acquire's admission (fair.go; requires group.mu): its
	// ask, which the front's Waiter links to (Waiter.Ask).
	fair *front.Waiter
	// asking: the ask waits in its window for the next batch, with no
	// answer yet (group_batch.go; requires group.mu).
	asking bool
	// queued numbers its latest entry in the queue (queueLocked); allow
	// says it is a caller's that is not in the fair queue (an Allow's),
	// which goes behind the callers of its priority queued before it
	// and ahead of the later ones, whatever their tenants (placeAllows).
	// Both require group.mu.
	queued uint64
	allow  bool
}

// commit runs one admission through the group of keys and returns its
// answer. If ctx ends (or the call timeout passes) while the admission
// waits in the queue, it is taken out and nothing is sent; if it ends
// while the admission is in flight, commit returns at once, and the
// admission, if any, is withdrawn when the answer comes.
func (s *schedule) commit(ctx context.Context, keys []string, req request) (admission, error) {
	g := &s.group
	p := &pending{ctx: ctx, req: req, prio: math.MaxInt}
	if req.how == "" {
		p.prio = rxthrottle.PriorityFrom(ctx)
	}
	g.mu.Lock()
	win := g.windowLocked(keys[0])
	f, busy := win.flight, win.flight != nil
	if !busy {
		f = &flight{key: keys[0]}
		win.flight = f
	}
	g.fairArriveLocked(win, p)
	p.allow = p.fair == nil && req.how == ""
	g.entries++
	p.queued = g.entries
	if !busy {
		g.mu.Unlock()
		return s.lead(ctx, keys, f, p, true)
	}
	p.done = make(chan struct{})
	win.enterLocked(p)
	if p.fair != nil {
		g.fairBumpLocked(win)
	}
	g.mu.Unlock()
	return s.awaitTurn(ctx, keys, f, p)
}

// awaitTurn waits for the answer of p, queued in f, and returns it; or
// leads the next call, if p's turn to lead comes first.
func (s *schedule) awaitTurn(ctx context.Context, keys []string, f *flight, p *pending) (admission, error) {
	if err := s.await(ctx, f, p); err != nil {
		return admission{}, err
	}
	if p.lead {
		return s.lead(ctx, keys, f, p, false)
	}
	return p.res, p.err
}

// await waits for p's answer (or its lead), the end of ctx, or the call
// timeout. If ctx ends or the timeout passes first, p is taken out of the
// queue, or marked abandoned if it is in flight, and await returns the
// error; unless p's answer came meanwhile, which then counts.
func (s *schedule) await(ctx context.Context, f *flight, p *pending) error {
	var expired <-chan time.Time
	if s.timeout > 0 {
		tm := time.NewTimer(s.timeout)
		defer tm.Stop()
		expired = tm.C
	}
	var err error
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = &noAnswerError{s.timeout}
	}
	g := &s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-p.done: // answered (or made leader) meanwhile
		return nil
	default:
	}
	if g.windows[f.key].unqueueLocked(p) {
		g.fairLeaveLocked(f.key, p, false)
	} else {
		p.abandoned = true
	}
	return err
}

// lead sends p's admission and the queue's (up to maxBatch) as one script
// run, and returns p's answer; fresh says p is not queued (it found no
// call in flight), else it was elected in its place in the queue (run).
// The call runs on the caller's goroutine if nothing can cut its wait
// short (inline), otherwise on a goroutine of its own while the caller
// waits (see group).
func (s *schedule) lead(ctx context.Context, keys []string, f *flight, p *pending, fresh bool) (admission, error) {
	g := &s.group
	inline := s.inline(ctx)
	g.mu.Lock()
	batch, in := g.takeBatchLocked(g.windows[f.key], p, fresh)
	p.lead = false
	if inline && in {
		p.done = nil
	} else {
		p.done = make(chan struct{})
	}
	g.mu.Unlock()
	if inline && in {
		s.run(keys, f, batch, s.timeout)
		return p.res, p.err
	}
	bound := time.Duration(0)
	if s.timeout > 0 {
		// An answer that comes after the callers stopped waiting is
		// still worth having: its admissions are withdrawn.
		bound = s.timeout + endTimeout
	}
	go s.run(keys, f, batch, bound)
	if !in {
		return s.awaitTurn(ctx, keys, f, p)
	}
	if err := s.await(ctx, f, p); err != nil {
		return admission{}, err
	}
	return p.res, p.err
}

// takeBatchLocked takes the next script run's batch from win's queue
// (group_batch.go), led by p: the ends, then the callers of the window's
// front in its order as the batch is taken, as the root's Bucket reads its
// queue at each grant (a tenant's caller that gave up since the last
// batch may have given the next of its tenant an earlier finish: SPEC.md,
// "Fair shares"), Allow's admissions among them. p, if fresh, was queued
// by nobody: it goes in its place in the queue. in says whether p is in
// the batch: more than maxBatch operations ahead of it leave it queued for
// the next run, which it then waits for as any caller queued. Requires
// group.mu.
func (g *group) takeBatchLocked(win *window, p *pending, fresh bool) (batch []*pending, in bool) {
	if fresh {
		if win.queuedLocked() == 0 && win.front.FIFO() {
			// Alone (the usual case): nobody to bump, nothing to order.
			return []*pending{p}, true
		}
		win.enterLocked(p)
	}
	batch = win.nextBatchLocked(g.fairBumpLocked(win), maxBatch)
	return batch, slices.Contains(batch, p)
}

// inline reports whether a call for ctx may run on the caller's
// goroutine: ctx cannot end, and the call timeout, if any, is honoured by
// the client itself.
func (s *schedule) inline(ctx context.Context) bool {
	return ctx.Done() == nil && (s.timeout == 0 || s.deadlines)
}
