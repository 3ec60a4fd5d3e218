package rxthrottle

import (
	"context"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// The callers who wait: a Bucket queues them in arrival order, and its one
// timer grants the head when its tokens are free (dispatchLocked).

// waitState is what a bucket needs once a caller has had to wait: the queue
// of waiters and the one timer that wakes the head. A bucket whose callers
// always find a token free never allocates it.
type waitState struct {
	queue waitQueue
	sched scheduler
}

// waitingLocked returns the number of callers waiting. Requires b.mu.
func (b *Bucket) waitingLocked() int {
	if b.waits == nil {
		return 0
	}
	return b.waits.queue.live
}

// await blocks until w is granted or ctx ends, and then withdraws w (or, for
// an operator's held grant, gives its token back).
func (b *Bucket) await(ctx context.Context, w *waiter) error {
	select {
	case <-w.ready:
		if w.state == failed {
			return w.err
		}
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.unlock()
	switch w.state {
	case granted:
		if w.kind != grantHold {
			return nil // it went: the caller has its tokens
		}
		b.opHeld -= w.n
		b.uncountLocked()
		b.dispatchLocked(b.now())
	case failed:
		return w.err
	default:
		b.cancelLocked(w)
	}
	return ctx.Err()
}

// enqueueLocked queues a caller of n tokens, of who's priority and tenant,
// arriving at now and plans the wake-up. Requires b.mu.
func (b *Bucket) enqueueLocked(now int64, n int, kind grantKind, who fairq.Caller) *waiter {
	who.Cost = n
	w := &waiter{ready: make(chan struct{}), arrived: now, n: n, kind: kind, who: who}
	if b.waits == nil {
		b.waits = new(waitState)
	}
	b.waits.queue.push(w)
	if b.hooks.agg != nil {
		b.hooks.agg.queued(1, b.waits.queue.live == 1)
	}
	b.queueHookLocked(b.hooks.onWait, Event{Key: b.key, Arrived: b.win.time(now), N: n})
	b.dispatchLocked(now)
	return w
}

// cancelLocked withdraws a waiting waiter: it consumes no token, and the
// callers behind it are re-planned as if it had never arrived. Requires b.mu.
func (b *Bucket) cancelLocked(w *waiter) {
	b.waits.queue.cancel(w) // w waits, so b.waits is allocated
	b.countCancelLocked()
	if b.hooks.agg != nil {
		b.hooks.agg.queued(-1, b.waits.queue.live == 0)
	}
	b.dispatchLocked(b.now())
}

// dispatchLocked grants tokens to the head of the queue for as long as they
// are free at now, then arms the one timer for the instant the next head's
// tokens are free or a hold times out, whichever is first (or disarms it:
// nobody waits, or the head waits for an operator's token to be emitted).
// Requires b.mu.
func (b *Bucket) dispatchLocked(now int64) {
	b.expireHoldsLocked(now)
	ws := b.waits
	if ws == nil {
		return // nobody has waited yet, and no timer was ever armed
	}
	for w := ws.queue.peek(); w != nil; w = ws.queue.peek() {
		if minN := b.win.smallestN(); w.n > minN { // a SetLimit made it impossible
			ws.queue.remove(w)
			if b.hooks.agg != nil {
				b.hooks.agg.queued(-1, ws.queue.live == 0)
				b.hooks.agg.cancelled.Add(1)
			}
			if b.stats != nil {
				b.stats.cancelled++
			}
			w.state, w.err = failed, costError("WaitN", w.n, minN)
			close(w.ready)
			if w.notify != nil {
				w.notify()
			}
			continue
		}
		at := b.freeAtLocked(w.n)
		if w.kind == grantToken && b.capReachedLocked() {
			at = never // until a hold ends: its release, or its timeout below
		}
		if at > now {
			at = min(at, b.holds.nextDeadline())
			if at == never {
				break
			}
			ws.sched.wakeAt(b, at, time.Duration(at-now))
			return
		}
		ws.queue.pop()
		if b.hooks.agg != nil {
			b.hooks.agg.queued(-1, ws.queue.live == 0)
		}
		w.token = b.admitLocked(now, w.arrived, w.n, w.kind)
		w.state, w.grantedAt = granted, now
		close(w.ready)
		if w.notify != nil {
			w.notify()
		}
	}
	ws.sched.disarm()
}

// wake is the timer's callback.
func (b *Bucket) wake() {
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	b.waits.sched.expired(now) // the timer is the waits' own
	b.dispatchLocked(now)
}

// countCancelLocked counts a caller that ended without a token: its wait
// was cancelled, or its deadline refused it at arrival. Requires b.mu.
func (b *Bucket) countCancelLocked() {
	if b.stats != nil {
		b.stats.cancelled++
	}
	if b.hooks.agg != nil {
		b.hooks.agg.cancelled.Add(1)
	}
}

// countRefusalLocked counts a caller refused by the queue bound. Requires
// b.mu.
func (b *Bucket) countRefusalLocked() {
	if b.stats != nil {
		b.stats.refused++
	}
	if b.hooks.agg != nil {
		b.hooks.agg.refused.Add(1)
	}
}
