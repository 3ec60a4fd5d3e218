package redisstore

import (
	"context"
	"slices"
	"sync"
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
type group struct {
	mu      sync.Mutex
	flights map[string]*flight // by the schedule's first key; present while a call is in flight
	// handedOver, if set (by tests only), runs when a call's answers and
	// the next lead have been handed over.
	handedOver func()
}

// flight is the queue of the callers waiting for the next call of one
// schedule (requires group.mu).
type flight struct {
	queue []*pending
}

// pending is one caller's admission in a group.
type pending struct {
	req  request
	done chan struct{} // closed when res and err are set, or when lead is
	res  admission
	err  error
	// lead: the caller is the next leader: it takes the queue as it is
	// when it runs (the callers answered by the last call that asked
	// again meanwhile included) and sends it (requires group.mu until
	// done is closed).
	lead bool
	// abandoned: the caller's context ended while its admission was in
	// flight; the leader withdraws it if it was admitted (requires
	// group.mu).
	abandoned bool
}

// commit runs one admission through the group of keys and returns its
// answer. If ctx ends while the admission waits in the queue, it is taken
// out and nothing is sent; if it ends while the admission is in flight,
// commit returns ctx.Err() at once and the leader of that call withdraws
// the reservation, if any, when the answer comes.
func (s *schedule) commit(ctx context.Context, keys []string, req request) (admission, error) {
	g := &s.group
	g.mu.Lock()
	if g.flights == nil {
		g.flights = map[string]*flight{}
	}
	f, busy := g.flights[keys[0]]
	if !busy {
		g.flights[keys[0]] = &flight{}
		g.mu.Unlock()
		return s.fly(ctx, keys, req, nil)
	}
	p := &pending{req: req, done: make(chan struct{})}
	f.queue = append(f.queue, p)
	g.mu.Unlock()

	select {
	case <-p.done:
	case <-ctx.Done():
		g.mu.Lock()
		select {
		case <-p.done: // answered (or made leader) meanwhile
			g.mu.Unlock()
		default:
			if i := indexOf(f.queue, p); i >= 0 {
				f.queue = append(f.queue[:i], f.queue[i+1:]...)
			} else {
				p.abandoned = true
			}
			g.mu.Unlock()
			return admission{}, ctx.Err()
		}
	}
	if p.lead {
		g.mu.Lock()
		n := min(len(f.queue), maxBatch-1)
		rest := append([]*pending(nil), f.queue[:n]...)
		f.queue = slices.Delete(f.queue, 0, n)
		g.mu.Unlock()
		return s.fly(ctx, keys, p.req, rest)
	}
	return p.res, p.err
}

func indexOf(q []*pending, p *pending) int {
	for i, x := range q {
		if x == p {
			return i
		}
	}
	return -1
}

// fly sends the caller's (the leader's) admission lead and the others'
// (rest) as one script run, hands the answers to the others, makes the
// first caller of the queue that built up meanwhile the next leader, and
// returns the leader's own answer.
func (s *schedule) fly(ctx context.Context, keys []string, lead request, rest []*pending) (admission, error) {
	var (
		reqs1 [1]request
		out1  [1]admission
	)
	reqs, out := reqs1[:], out1[:]
	if len(rest) > 0 {
		reqs, out = make([]request, 1+len(rest)), make([]admission, 1+len(rest))
	}
	reqs[0] = lead
	for i, p := range rest {
		reqs[i+1] = p.req
	}
	fctx := ctx
	if len(rest) > 0 {
		// The others must not fail because the leader gave up.
		fctx = context.WithoutCancel(ctx)
	}
	err := s.runBatch(fctx, keys, reqs, out)

	g := &s.group
	var withdraw []int
	g.mu.Lock()
	f := g.flights[keys[0]]
	var next *pending
	if len(f.queue) == 0 {
		delete(g.flights, keys[0])
	} else {
		next = f.queue[0]
		next.lead = true
		f.queue = slices.Delete(f.queue, 0, 1)
	}
	for i, p := range rest {
		p.res, p.err = out[i+1], err
		if p.abandoned && err == nil && out[i+1].admitted {
			withdraw = append(withdraw, i+1)
		}
	}
	// The answers and the lead are handed over under mu: a caller whose
	// context ends meanwhile sees done closed and takes them, rather than
	// give up unseen an admission already made (not withdrawn then) or the
	// lead (the queue behind it would wait forever).
	for _, p := range rest {
		close(p.done)
	}
	if next != nil {
		close(next.done)
	}
	g.mu.Unlock()
	if g.handedOver != nil {
		g.handedOver()
	}
	for _, i := range withdraw {
		s.end(keys, out[i].id, reqs[i].n, out[i].e, "withdraw")
	}
	return out[0], err
}
