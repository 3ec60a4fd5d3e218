package rxthrottle

import "time"

// EstimateWait estimates how long a WaitN of n tokens, of the default
// priority, would wait if it arrived now and nothing changed meanwhile: the
// callers already waiting that would go before it (those of priority 0 or
// higher) go first, in their order, each at the earliest instant the
// limits, the pause and the spacing allow, and every hold (the tokens held
// now, and those of the callers ahead that will hold) is taken to end the
// moment it starts. It returns 0 when n tokens are free now and nobody
// waits.
//
// It is an estimate, not a promise. The wait can be shorter (a caller ahead
// gives up, a SetLimit raises a limit) or longer: a hold that lasts (an
// Acquire's Token until its Release, an HTTP request until its answer), the
// concurrency cap of WithConcurrency, a caller of higher priority arriving
// later, a Pause. Unlike the deadline rule (ErrDeadline), which only
// refuses a caller whose deadline comes before a lower bound of its wait,
// the estimate counts the queue ahead: compare it with the time a caller
// has, to give up before waiting instead of sleeping until its deadline.
// It reads the queue under the bucket's lock and costs a copy of the
// window's history when callers wait. n < 1 or n above the smallest N is
// an error wrapping ErrInvalidCost.
func (b *Bucket) EstimateWait(n int) (time.Duration, error) {
	if err := b.usable(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.unlock()
	if err := b.checkCostLocked("EstimateWait", n); err != nil {
		return 0, err
	}
	now := b.now()
	return time.Duration(b.estimateLocked(now, n) - now), nil
}

// EstimateWait is Bucket.EstimateWait for key: an estimate, not a promise,
// of how long a WaitN(ctx, key, n) of the default priority arriving now
// would wait, over the callers of key alone. A key not seen before (or
// forgotten) has nobody waiting: its estimate is 0. It is an error for an
// empty key, a key beyond WithMaxKeys, or n < 1 or above the key's smallest
// N (wrapping ErrInvalidCost).
func (k *Keyed) EstimateWait(key string, n int) (time.Duration, error) {
	var (
		d       time.Duration
		costErr error
	)
	err := k.with(key, true, func(b *Bucket, now int64) {
		if costErr = b.checkCostLocked("EstimateWait", n); costErr == nil {
			d = time.Duration(b.estimateLocked(now, n) - now)
		}
	})
	if err == nil {
		err = costErr
	}
	return d, err
}

// estimateLocked returns the offset at which a caller of n tokens and
// priority 0 arriving at now would go by EstimateWait's projection; n is a
// valid cost. Requires b.mu.
func (b *Bucket) estimateLocked(now int64, n int) int64 {
	held := b.heldLocked()
	var ahead []*waiter
	if b.waits != nil {
		ahead = b.waits.queue.aheadOfPrio(0)
	}
	if len(ahead) == 0 {
		// The held tokens completed now and nobody ahead: the deadline
		// rule's bound, without a copy of the history.
		return b.win.earliest(now, held, n)
	}
	sim := b.win.clone()
	for range held {
		sim.record(now)
	}
	d := now
	for _, x := range append(ahead, &waiter{n: n}) {
		d = max(d, sim.freeAt(0, x.n)) // none overtakes the one before it
		sim.depart(d)
		for range x.n {
			sim.record(d)
		}
	}
	return d
}

// aheadOfPrio returns the live waiters that go before a caller of priority
// prio arriving now (those of priority prio or higher), in the order they
// go.
func (q *waitQueue) aheadOfPrio(prio int) []*waiter {
	var out []*waiter
	for i := range q.lanes {
		if q.lanes[i].prio < prio {
			break // lanes are sorted by priority, highest first
		}
		for _, x := range q.lanes[i].items[q.lanes[i].head:] {
			if x.state == waiting {
				out = append(out, x)
			}
		}
	}
	return out
}
