package rxthrottle

import (
	"context"
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/adaptive"
	"github.com/rxthrottle/rxthrottle/internal/kit"
)

// Token is a held token: what Acquire returns. The caller holds it for the
// work it paid for (an HTTP request, until its response has arrived) and
// then calls Release; the token renews one window after the Release, not
// after the departure. A server that counts arrivals, whatever the network
// does between departure and arrival, then sees at most N arrivals in any
// window (SPEC.md, "Held tokens: renewal on completion").
//
// Token is a small value: Acquire allocates nothing, copies of a Token
// refer to the same hold, and the zero Token is a valid no-op. Release and
// Cancel are idempotent and safe for concurrent use; the first of them to
// run decides. A Token neither released nor cancelled is released by the
// limiter at departure plus the hold timeout (WithHoldTimeout).
type Token struct {
	r  kit.Releaser // a Limiter built outside this package sets it through limiterkit.NewToken
	id uint64
}

// Release says the work the token paid for is done: the token renews one
// window after the limiter's clock reading taken in Release. It is a no-op
// on the zero Token, after an earlier Release or Cancel, and after the
// hold timeout.
func (t Token) Release() {
	if t.r != nil {
		t.r.ReleaseToken(t.id)
	}
}

// Cancel gives the token back unused, when the work it was for was never
// started (the request was never sent): the caller consumes no token, as if
// it had cancelled its wait. It is a no-op on the zero Token and once the
// hold has ended (Release, an earlier Cancel, the hold timeout).
func (t Token) Cancel() {
	if t.r != nil {
		t.r.CancelToken(t.id)
	}
}

// Acquire waits like Wait and returns the token held: the token renews one
// window after Token.Release (or the hold timeout), not after the
// departure. Use it when what the token pays for takes time and is counted
// at its far end, like an HTTP request at the server. If ctx ends first,
// Acquire returns ctx.Err() and the caller consumes no token.
func (b *Bucket) Acquire(ctx context.Context) (Token, error) {
	// The hot path, as Wait's (wait_hotpath.go): a token free now, nobody
	// ahead, taken under one lock with no call AcquireN's checks need for
	// n = 1. Whatever takeLocked cannot grant at once, AcquireN decides.
	if b != nil && b.hooks != nil && ctx != nil && ctx.Err() == nil {
		b.mu.Lock()
		if id, ok := b.acquireOneLocked(b.now()); ok {
			if b.calls.None() {
				b.mu.Unlock() // b.unlock() with no hook call to make
			} else {
				b.unlock()
			}
			return Token{r: (*bucketTokens)(b), id: id}, nil
		}
		b.mu.Unlock()
	}
	return b.AcquireN(ctx, 1)
}

// AcquireN is Acquire for a caller that costs n tokens (an API that charges
// points per call): it waits, in FIFO order, until n tokens are free at
// once and holds all n until the Release. n < 1 or n above the smallest N
// of the limits is an error wrapping ErrInvalidCost, at once.
func (b *Bucket) AcquireN(ctx context.Context, n int) (Token, error) {
	id, err := b.waitN(ctx, n, grantToken, "AcquireN", false)
	if err != nil {
		return Token{}, err
	}
	return Token{r: (*bucketTokens)(b), id: id}, nil
}

// bucketTokens is the kit.Releaser of a Bucket, a distinct type so that
// ReleaseToken and CancelToken stay out of Bucket's method set.
type bucketTokens Bucket

func (t *bucketTokens) ReleaseToken(id uint64) { (*Bucket)(t).endHold(id, true) }
func (t *bucketTokens) CancelToken(id uint64)  { (*Bucket)(t).endHold(id, false) }

// endHold ends hold id: used, it records the completion at a clock reading
// taken under the lock; unused, it gives the tokens back. A hold that has
// ended already, by a call or by its timeout, is left alone.
func (b *Bucket) endHold(id uint64, used bool) {
	b.mu.Lock()
	now := b.now()
	b.expireHoldsLocked(now)
	if n, ok := b.holds.end(id, now, used); ok {
		if used {
			// One token onto a full ring of the last N completions
			// written out (push's last case), as Wait's hot path does.
			if n != 1 || !b.win.overwriteOldest(now) {
				for range n {
					b.win.record(now)
				}
			}
		} else {
			b.uncountLocked()
		}
		b.front.Dispatch(b.planner(), now) // dispatchLocked: the holds expired above
	}
	if b.calls.None() {
		b.mu.Unlock() // b.unlock() with no hook call to make
	} else {
		b.unlock()
	}
}

// acquireOneLocked is takeLocked(now, 1, grantToken) with admitLocked's
// grant of one held token written out: Acquire's hot path. Requires b.mu.
func (b *Bucket) acquireOneLocked(now int64) (uint64, bool) {
	b.expireHoldsLocked(now)
	if b.front.Waiting() > 0 || b.capReachedLocked() || b.freeAtLocked(1) > now {
		return 0, false
	}
	id := b.holdLogLocked().add(now, addSat(now, int64(b.hooks.holdTimeout)), 1)
	b.win.depart(now)
	if s, ok := b.tally.(*bucketCounts); ok && b.hooks.onAdmit == nil {
		s.Admitted++ // all countAdmitLocked does for a caller that did not wait
	} else {
		b.countAdmitLocked(now, now, 1)
	}
	return id, true
}

// expireHoldsLocked ends the holds whose timeout has passed at now: each
// completes at its deadline, so it renews W after departure + hold
// timeout, exactly, however late this runs. Requires b.mu. Its common
// case, the first hold kept live and not yet due (or none live), returns
// before the loop.
func (b *Bucket) expireHoldsLocked(now int64) {
	l := b.holds
	if l == nil || l.live == 0 {
		return
	}
	if h := &l.items[l.head]; h.live && h.deadline > now {
		return // the oldest live hold (oldest) is not due
	}
	b.expireHoldsDueLocked(now)
}

// expireHoldsDueLocked is expireHoldsLocked past its check. Requires b.mu.
func (b *Bucket) expireHoldsDueLocked(now int64) {
	for b.holds != nil && b.holds.live > 0 {
		h := b.holds.oldest()
		if h.deadline > now {
			return
		}
		b.holds.end(b.holds.first+uint64(b.holds.head), h.deadline, true)
		for range h.n {
			b.win.recordAt(h.deadline)
		}
	}
}

// heldLocked returns the tokens granted and not yet completed or given
// back: the operators' and the Tokens'. Requires b.mu.
func (b *Bucket) heldLocked() int {
	if b.holds == nil {
		return 0
	}
	return b.holds.op + b.holds.n
}

// opHeldLocked returns the tokens granted to an operator's items and not
// yet recorded as emitted. Requires b.mu.
func (b *Bucket) opHeldLocked() int {
	if b.holds == nil {
		return 0
	}
	return b.holds.op
}

// holdLogLocked returns b.holds, made on first use. Requires b.mu.
func (b *Bucket) holdLogLocked() *holdLog {
	if b.holds == nil {
		b.holds = b.newHoldLog()
	}
	return b.holds
}

// hold is one Token's state in its Bucket.
type hold struct {
	deadline int64 // departure + hold timeout
	start    int64 // departure
	n        int
	open     int32 // holds open at its departure, itself included
	live     bool
}

// holdLog keeps the Tokens of a Bucket in departure order, so their
// deadlines are sorted and the oldest live one is the next to time out.
// Ids are consecutive: a hold is found by its id in O(1), and ended holds
// are dropped from the front as the live ones ahead of them end.
type holdLog struct {
	items []hold
	head  int    // items[head] is the oldest hold not yet dropped
	first uint64 // the id of items[0]
	live  int    // holds still live
	n     int    // tokens they hold
	// op is the tokens granted to an operator's items (grantHold) and not
	// yet emitted downstream: held until the emission is recorded
	// (operator_hold.go), with no timeout and no Token.
	op int
	// ended counts the holds that ended completed (released or timed
	// out), and heldFor sums their lengths, ns (Stats.Released,
	// Stats.TotalHold).
	ended   uint64
	heldFor int64
	// adapt is WithAdaptiveConcurrency's cap, fed with the latency of each
	// hold that ends completed (released, or timed out); nil without it.
	adapt *adaptive.Limiter
}

// add starts a hold of n tokens at start until deadline and returns its
// id.
func (l *holdLog) add(start, deadline int64, n int) uint64 {
	if l.head > 32 && l.head*2 > len(l.items) { // reclaim the ended front
		k := copy(l.items, l.items[l.head:])
		l.items = l.items[:k]
		l.first += uint64(l.head)
		l.head = 0
	}
	l.items = append(l.items, hold{deadline: deadline, start: start, n: n, open: int32(l.live + 1), live: true})
	l.live++
	l.n += n
	return l.first + uint64(len(l.items)-1)
}

// oldest returns the oldest live hold; there must be one. It drops the
// ended ones in front of it on the way.
func (l *holdLog) oldest() hold {
	for !l.items[l.head].live {
		l.head++
	}
	return l.items[l.head]
}

// end ends hold id at now if it is live and returns its tokens; completed
// says the call it paid for completed (its latency is a sample for the
// adaptive cap). l may be nil.
func (l *holdLog) end(id uint64, now int64, completed bool) (n int, ok bool) {
	if l == nil {
		return 0, false
	}
	if id < l.first+uint64(l.head) || id-l.first >= uint64(len(l.items)) {
		return 0, false
	}
	h := &l.items[id-l.first]
	if !h.live {
		return 0, false
	}
	h.live = false
	n = h.n
	if completed {
		l.ended++
		l.heldFor += now - h.start
		if l.adapt != nil {
			l.adapt.Sample(h.start, now, int(h.open))
		}
	}
	l.live--
	l.n -= n
	if l.live == 0 { // nothing live: start afresh without reallocating
		l.first += uint64(len(l.items))
		l.items, l.head = l.items[:0], 0
	}
	return n, true
}

// endedCount returns how many holds ended completed; l may be nil.
func (l *holdLog) endedCount() uint64 {
	if l == nil {
		return 0
	}
	return l.ended
}

// heldTotal returns the sum of the completed holds' lengths; l may be nil.
func (l *holdLog) heldTotal() time.Duration {
	if l == nil {
		return 0
	}
	return time.Duration(l.heldFor)
}

// nextDeadline returns the deadline of the oldest live hold, or never. l
// may be nil.
func (l *holdLog) nextDeadline() int64 {
	if l == nil || l.live == 0 {
		return never
	}
	return l.oldest().deadline
}

// String describes a Token for debugging.
func (t Token) String() string {
	if t.r == nil {
		return "rxthrottle.Token(none)"
	}
	return fmt.Sprintf("rxthrottle.Token(#%d)", t.id)
}
