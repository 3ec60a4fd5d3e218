package rxthrottle

import (
	"context"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// The operators (Throttle, ThrottleWith over a *Bucket, ThrottleBy,
// ThrottleChan) hold a token from its grant until the downstream has
// received the item, and record the emission then, at a clock reading taken
// after it. They reach a Bucket only through itemGate, which bucketItems
// implements: the operators' side of the front, kept out of Bucket's method
// set. Their tokens are the Bucket's untimed holds (token_holds.go): the
// core knows them only as a count of tokens held, completed or given back
// through the methods below.
//
// They do not use Acquire and Token.Release, which would change what they
// do: a Token times out at WithHoldTimeout, after which its token renews
// (an item a slow downstream has not received yet would stop counting, and
// the window could leak: TestThrottleChanSlowerThanHoldTimeout); Tokens
// count against WithConcurrency's and WithAdaptiveConcurrency's cap (an
// item would wait for a place, and its hold feed the adaptive cap) and in
// Stats.Held, Released and TotalHold (TestOperatorItemsOutsideConcurrencyCap);
// Acquire is refused by the queue bound and by its context's deadline,
// which an item is exempt from (TestOperatorItemExemptFromQueueBound);
// Release records the completion at its own clock reading, where flush
// records a private bucket's emissions at the stamp taken after them
// (exact on virtual time), and tryHold takes a token with no clock read;
// and with WithSpacing an item departs at its emission, not at its grant
// (TestPropertyThrottleWithSpacingMatchesSpec).

// itemGate is what an operator asks of an in-memory limiter for its items.
type itemGate interface {
	// now reads the limiter's clock as an offset (Bucket.now).
	now() int64
	// wait waits for an item's token, held (hold) or recorded at once.
	wait(ctx context.Context, hold bool) error
	// tryHold holds a token free at known, recording n stamped emissions
	// first (bucketItems.tryHold).
	tryHold(n int, at, known int64) bool
	// flush records held tokens as emitted and returns the reading taken.
	flush(stamped int, at int64, rest int) int64
	// giveBack returns a held token whose item was never emitted.
	giveBack()
	// withdraw withdraws w, an item's waiter, if it still waits.
	withdraw(w *waiter)
}

// bucketItems is a Bucket as the operators' itemGate, a distinct type so
// that the operators' methods stay out of Bucket's method set.
type bucketItems Bucket

var _ itemGate = (*bucketItems)(nil)

// items returns b as the operators' itemGate.
func (b *Bucket) items() *bucketItems { return (*bucketItems)(b) }

// bucket returns the Bucket behind g.
func (g *bucketItems) bucket() *Bucket { return (*Bucket)(g) }

// now is Bucket.now.
func (g *bucketItems) now() int64 { return g.bucket().now() }

// withdraw withdraws w if it still waits, and re-plans the queue.
func (g *bucketItems) withdraw(w *waiter) {
	b := g.bucket()
	b.mu.Lock()
	if w.State == waiting {
		b.cancelLocked(w)
	}
	b.unlock() // and the hooks the re-planning queued
}

// wait is Wait for the operators; with hold, the token is granted but its
// emission is only recorded by flush (or dropped by giveBack), since an
// operator's item is emitted when the downstream receives it.
func (g *bucketItems) wait(ctx context.Context, hold bool) error {
	b := g.bucket()
	kind := operatorGrant(hold)
	_, err := b.waitN(ctx, 1, kind, "Wait", true)
	return err
}

// arriveItemLocked admits an operator's item of who's priority and tenant
// arriving at now if a token is free and nobody waits, and returns nil;
// otherwise it queues the item and returns its waiter (which goes at once,
// before the waiters it leads, if its token is free). Requires b.mu.
func (g *bucketItems) arriveItemLocked(now int64, hold bool, who fairq.Caller) *waiter {
	b := g.bucket()
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
func (g *bucketItems) tryHold(n int, at, known int64) bool {
	b := g.bucket()
	b.mu.Lock()
	defer b.unlock()
	b.completeUntimedLocked(n, at)
	_, ok := b.takeLocked(known, 1, grantHold)
	return ok
}

// flush records held tokens as emitted: stamped of them at at, and rest at
// a fresh clock reading, which it returns. Both instants are no earlier than
// the true emissions, so the window can only be stricter, and exactly theirs
// on virtual time when nothing blocked in between.
func (g *bucketItems) flush(stamped int, at int64, rest int) int64 {
	b := g.bucket()
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	b.completeUntimedLocked(stamped, at)
	b.completeUntimedLocked(rest, now)
	b.dispatchLocked(now)
	return now
}

// giveBack returns a held token whose item was never emitted.
func (g *bucketItems) giveBack() {
	b := g.bucket()
	b.mu.Lock()
	defer b.unlock()
	b.giveBackUntimedLocked(1)
}

// operatorGrant is the grant an operator asks for: held until its item is
// emitted (hold), or recorded at once.
func operatorGrant(hold bool) grantKind {
	if hold {
		return grantHold
	}
	return grantRecord
}
