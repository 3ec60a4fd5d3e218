package rxthrottle

import (
	"context"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// The operators (Throttle, ThrottleWith over a *Bucket, ThrottleBy) hold a
// token from its grant until the downstream has received the item, and
// record the emission then, at a clock reading taken after it: these are
// the Bucket's methods for them.

// wait is Wait for the operators; with hold, the token is granted but its
// emission is only recorded by flush (or dropped by giveBack), since an
// operator's item is emitted when the downstream receives it.
func (b *Bucket) wait(ctx context.Context, hold bool) error {
	kind := operatorGrant(hold)
	_, err := b.waitN(ctx, 1, kind, "Wait", true)
	return err
}

// arriveItemLocked admits an operator's item of who's priority and tenant
// arriving at now if a token is free and nobody waits, and returns nil;
// otherwise it queues the item and returns its waiter (which goes at once,
// before the waiters it leads, if its token is free). Requires b.mu.
func (b *Bucket) arriveItemLocked(now int64, hold bool, who fairq.Caller) *waiter {
	kind := operatorGrant(hold)
	if _, ok := b.takeLocked(now, 1, kind); ok {
		return nil
	}
	return b.enqueueLocked(now, 1, kind, who)
}

// tryHold records n held tokens as emitted at at (n is 0 unless the caller
// stamped emissions of a bucket only it uses), then holds one more, without
// reading the clock, if one was free at known, an earlier reading of it,
// and nobody waits: free tokens never become fewer as time passes, so one
// free then is free now (the item's emission is recorded later, at a
// reading taken after it). It is the operator's fast path. It need not
// re-plan the queue: recording a stamp only happens on a private bucket,
// and taking a token frees none.
func (b *Bucket) tryHold(n int, at, known int64) bool {
	b.mu.Lock()
	defer b.unlock()
	b.recordHeldLocked(n, at)
	_, ok := b.takeLocked(known, 1, grantHold)
	return ok
}

// flush records held tokens as emitted: stamped of them at at, and rest at
// a fresh clock reading, which it returns. Both instants are no earlier than
// the true emissions, so the window can only be stricter, and exactly theirs
// on virtual time when nothing blocked in between.
func (b *Bucket) flush(stamped int, at int64, rest int) int64 {
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	b.recordHeldLocked(stamped, at)
	b.recordHeldLocked(rest, now)
	b.dispatchLocked(now)
	return now
}

// recordHeldLocked turns n operator-held tokens into emissions at off.
// Requires b.mu.
func (b *Bucket) recordHeldLocked(n int, off int64) {
	if n == 0 {
		return
	}
	for range n {
		b.win.record(off)
	}
	b.win.depart(off)
	b.holds.op -= n
}

// giveBack returns an operator-held token whose item was never emitted.
func (b *Bucket) giveBack() {
	b.mu.Lock()
	defer b.unlock()
	b.giveBackLocked()
}

// giveBackLocked requires b.mu.
func (b *Bucket) giveBackLocked() {
	b.holds.op--
	b.uncountLocked()
	b.dispatchLocked(b.now())
}

// usesBatches reports whether Throttle's emitter may hold this bucket's
// free tokens in batches (batchEmitter): only the emitter uses the bucket,
// and nothing observes an admission at the moment it is made (no OnWait or
// OnAdmit hook, no Keyed counters) or depends on the departures of items
// in flight (no spacing).
func (b *Bucket) usesBatches() bool {
	return b.hooks.onWait == nil && b.hooks.onAdmit == nil && b.hooks.agg == nil && b.win.spacing == 0
}

// holdFree records stamped held tokens as emitted at their stamps, then
// holds the tokens free at known, an earlier clock reading, up to maxBatch,
// and returns how many. Free tokens never become fewer as time passes, so
// those free then are free now. Only batchEmitter calls it, on a bucket
// only it uses.
func (b *Bucket) holdFree(stamps []stamp, known int64) int {
	b.mu.Lock()
	defer b.unlock()
	for _, s := range stamps {
		b.recordHeldLocked(s.n, s.at)
	}
	return b.holdFreeLocked(known)
}

// holdFreeNow records n held tokens as emitted at a fresh clock reading,
// then holds the tokens free at it, up to maxBatch; it returns the reading
// and how many it holds.
func (b *Bucket) holdFreeNow(n int) (int64, int) {
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	b.recordHeldLocked(n, now)
	return now, b.holdFreeLocked(now)
}

// holdFreeLocked holds the tokens free at now for nobody waiting, up to
// maxBatch, as one admission of each. Requires b.mu.
func (b *Bucket) holdFreeLocked(now int64) int {
	b.expireHoldsLocked(now)
	if b.waitingLocked() > 0 {
		return 0
	}
	n := min(b.win.free(now, b.heldLocked()), maxBatch)
	if n <= 0 {
		return 0
	}
	b.holdLogLocked().op += n
	b.win.depart(now)
	if b.stats != nil {
		b.stats.admitted += uint64(n)
	}
	return n
}

// settle ends a batchEmitter's subscription: it records the stamped held
// tokens at their stamps and n more at a fresh clock reading, and gives
// back the spare ones it held for no item; lost of those were held for
// items the downstream never took, which count as cancelled (the others
// were never admitted for anyone).
func (b *Bucket) settle(stamps []stamp, n, spare, lost int) {
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	for _, s := range stamps {
		b.recordHeldLocked(s.n, s.at)
	}
	b.recordHeldLocked(n, now)
	b.holdLogLocked().op -= spare
	if b.stats != nil {
		b.stats.admitted -= uint64(spare)
		b.stats.cancelled += uint64(lost)
	}
	b.dispatchLocked(now)
}

// operatorGrant is the grant an operator asks for: held until its item is
// emitted (hold), or recorded at once.
func operatorGrant(hold bool) grantKind {
	if hold {
		return grantHold
	}
	return grantRecord
}
