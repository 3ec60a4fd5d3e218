package rxthrottle

import (
	"context"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// The callers who wait: a Bucket's front (internal/admission) queues them
// in their order (priority, tenants' fair shares, arrival), and its one timer grants the head when its tokens are
// free; bucketPlanner answers the front's questions from the window and
// the holds.

// waitingLocked returns the number of callers waiting. Requires b.mu.
func (b *Bucket) waitingLocked() int { return b.front.Waiting() }

// await blocks until w is granted or ctx ends, and then withdraws w (or, for
// an untimed hold granted, gives its tokens back: its holder never learns
// it has them).
func (b *Bucket) await(ctx context.Context, w *waiter) error {
	select {
	case <-w.Ready:
		if w.State == failed {
			return w.Err
		}
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.unlock()
	switch w.State {
	case granted:
		if w.Kind != grantHold {
			return nil // it went: the caller has its tokens
		}
		b.giveBackUntimedLocked(w.N)
	case failed:
		return w.Err
	default:
		b.cancelLocked(w)
	}
	return ctx.Err()
}

// enqueueLocked queues a caller of n tokens, of who's priority and tenant,
// arriving at now and plans the wake-up. Requires b.mu.
func (b *Bucket) enqueueLocked(now int64, n int, kind grantKind, who fairq.Caller) *waiter {
	w := admission.NewWaiter(now, n, kind, who)
	b.tally.queued(1, b.front.Push(w))
	if f := b.hooks.onWait; f != nil {
		b.queueHookLocked(f, Event{Key: b.tally.eventKey(), Arrived: b.timeAt(now), N: n})
	}
	b.dispatchLocked(now)
	return w
}

// cancelLocked withdraws a waiting waiter: it consumes no token, and the
// callers behind it are re-planned as if it had never arrived. Requires b.mu.
func (b *Bucket) cancelLocked(w *waiter) {
	b.front.Cancel(b.planner(), w)
	b.dispatchLocked(b.now())
}

// dispatchLocked ends the holds timed out at now, then lets the front grant
// the waiters whose tokens are free and arm its timer for the next.
// Requires b.mu.
func (b *Bucket) dispatchLocked(now int64) {
	b.expireHoldsLocked(now)
	b.front.Dispatch(b.planner(), now)
}

// wake is the front timer's callback.
func (b *Bucket) wake() {
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	b.front.Timer().Expired(now) // the timer is the front's own
	b.dispatchLocked(now)
}

// bucketPlanner is a Bucket as its front's admission.Planner, a distinct
// type so that the planner's methods stay out of Bucket's method set.
// Every method requires b.mu.
type bucketPlanner Bucket

var _ admission.Planner = (*bucketPlanner)(nil)

// planner returns b as its front's planner.
func (b *Bucket) planner() *bucketPlanner { return (*bucketPlanner)(b) }

// FreeAt returns when n tokens are free and, for a hold, WithConcurrency's
// cap leaves a place: never while that waits for a hold to end (its
// release, or its timeout, which NextChange gives).
func (p *bucketPlanner) FreeAt(n int, kind uint8) int64 {
	b := (*Bucket)(p)
	if kind == grantToken && b.capReachedLocked() {
		return never
	}
	return b.freeAtLocked(n)
}

// NextChange returns the next hold timeout.
func (p *bucketPlanner) NextChange() int64 { return p.holds.nextDeadline() }

// Grant admits w at now.
func (p *bucketPlanner) Grant(w *waiter, now int64) {
	w.Token = (*Bucket)(p).admitLocked(now, w.Arrived, w.N, w.Kind)
}

// Unservable fails a waiter whose cost a SetLimit made larger than the
// smallest N.
func (p *bucketPlanner) Unservable(w *waiter) error {
	if minN := p.win.smallestN(); w.N > minN {
		return refuse.Cost("WaitN", w.N, minN)
	}
	return nil
}

// Earliest is earliestLocked.
func (p *bucketPlanner) Earliest(now int64, n int) int64 {
	return (*Bucket)(p).earliestLocked(now, n)
}

// Left counts w leaving the queue: a cancellation unless it was granted.
func (p *bucketPlanner) Left(w *waiter, empty bool) {
	b := (*Bucket)(p)
	if w.State != granted {
		b.countCancelLocked()
	}
	b.tally.queued(-1, empty)
}

// Clock returns the clock of the front's timer.
func (p *bucketPlanner) Clock() clock.Clock { return p.hooks.clock }

// Wake is Bucket.wake.
func (p *bucketPlanner) Wake() { (*Bucket)(p).wake() }

// countCancelLocked counts a caller that ended without a token: its wait
// was cancelled, or its deadline refused it at arrival. Requires b.mu.
func (b *Bucket) countCancelLocked() { b.tally.cancel() }

// countRefusalLocked counts a caller refused by the queue bound. Requires
// b.mu.
func (b *Bucket) countRefusalLocked() { b.tally.refuse() }

// queueBound returns WithMaxQueue's bound, -1 for none.
func (b *Bucket) queueBound() int { return b.hooks.queueRoom - 1 }
