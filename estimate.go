package rxthrottle

import (
	"context"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// EstimateWait estimates how long a WaitN(ctx, n) would wait if it
// arrived now and nothing changed meanwhile. ctx gives the caller's
// priority and tenant (WithPriority, WithTenant), as for WaitN; its
// deadline plays no part. The callers already waiting that would go before
// it go first, in their order, each at the earliest instant the limits,
// the pause and the spacing allow, and every hold (the tokens held now,
// and those of the callers ahead that will hold) is taken to end the
// moment it starts. It returns 0 when the caller would go at once.
//
// It is an estimate, not a promise. The wait can be shorter (a caller ahead
// gives up, a SetLimit raises a limit) or longer: a hold that lasts (an
// Acquire's Token until its Release, an HTTP request until its answer), the
// concurrency cap of WithConcurrency, a caller of higher priority (or a
// tenant's fairer share) arriving later, a Pause. Unlike the deadline rule
// (ErrDeadline), which only refuses a caller whose deadline comes before a
// lower bound of its wait, the estimate counts the queue ahead: compare it
// with the time a caller has, to give up before waiting instead of
// sleeping until its deadline. It reads the queue under the bucket's lock,
// and costs a copy of the window's history when callers wait. A nil ctx is
// an error, and so are n < 1 or n above the smallest N (wrapping
// ErrInvalidCost).
func (b *Bucket) EstimateWait(ctx context.Context, n int) (time.Duration, error) {
	if err := b.usable(); err != nil {
		return 0, err
	}
	if ctx == nil {
		return 0, errNilContext
	}
	who := callerOf(ctx) // the caller's code: read with no lock held
	b.mu.Lock()
	defer b.unlock()
	if err := b.checkCostLocked("EstimateWait", n); err != nil {
		return 0, err
	}
	now := b.now()
	return time.Duration(b.estimateLocked(now, n, who) - now), nil
}

// EstimateWait is Bucket.EstimateWait for key: an estimate, not a promise,
// of how long a WaitN(ctx, key, n) arriving now would wait, over the
// callers of key alone. A key not seen before (or forgotten) has nobody
// waiting. It is an error for a nil ctx, an empty key, a key beyond
// WithMaxKeys, or n < 1 or above the key's smallest N (wrapping
// ErrInvalidCost).
func (k *Keyed) EstimateWait(ctx context.Context, key string, n int) (time.Duration, error) {
	if ctx == nil {
		return 0, errNilContext
	}
	who := callerOf(ctx)
	var (
		d       time.Duration
		costErr error
	)
	err := k.with(key, true, func(b *Bucket, now int64) {
		if costErr = b.checkCostLocked("EstimateWait", n); costErr == nil {
			d = time.Duration(b.estimateLocked(now, n, who) - now)
		}
	})
	if err == nil {
		err = costErr
	}
	return d, err
}

// estimateLocked returns the offset at which a caller who of n tokens
// arriving at now would go by EstimateWait's projection; n is a valid
// cost. Requires b.mu.
func (b *Bucket) estimateLocked(now int64, n int, who fairq.Caller) int64 {
	held := b.heldLocked()
	who.Cost = n
	// Where it would stand: the callers ahead of a probe in the queue,
	// withdrawn at once (as if it had never arrived: no finish changes).
	ahead := b.front.Probe(who, n)
	if ahead == nil {
		// The held tokens completed now and nobody ahead: the deadline
		// rule's bound, without a copy of the history.
		return b.win.earliest(now, held, n)
	}
	probe := &waiter{N: n}

	sim := b.win.clone()
	for range held {
		sim.record(now)
	}
	d := now
	for _, x := range append(ahead, probe) {
		d = max(d, sim.freeAt(0, x.N)) // none overtakes the one before it
		sim.depart(d)
		for range x.N {
			sim.record(d)
		}
	}
	return d
}
