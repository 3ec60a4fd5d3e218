package rxthrottle

import (
	"context"
	"fmt"
	"time"

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
	if b, ok := t.r.(*bucketTokens); ok {
		(*Bucket)(b).endHold(t.id, true) // a Bucket's, called directly: no dynamic call
	} else if t.r != nil {
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

// String describes a Token for debugging.
func (t Token) String() string {
	if t.r == nil {
		return "rxthrottle.Token(none)"
	}
	return fmt.Sprintf("rxthrottle.Token(#%d)", t.id)
}

// Acquire waits like Wait and returns the token held: the token renews one
// window after Token.Release (or the hold timeout), not after the
// departure. Use it when what the token pays for takes time and is counted
// at its far end, like an HTTP request at the server. If ctx ends first,
// Acquire returns ctx.Err() and the caller consumes no token.
func (b *Bucket) Acquire(ctx context.Context) (Token, error) {
	if tok, _, ok := b.acquireFree(ctx); ok { // the hot path (wait_hotpath.go)
		return tok, nil
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
	b.mu.Mutex.Lock() // b.mu.Lock(), written out: it cannot be inlined (wait_fastpath.go)
	if f := b.mu.fast.Load(); f != nil {
		f.closeLocked()
	}
	now := int64(0)
	if b.hooks.realClock {
		now = int64(time.Since(b.hooks.base)) // b.now(), inlined
	} else {
		now = b.injectedNow()
	}
	if used {
		// The common end, written out: the only hold live, one token, not
		// due, ended onto a full ring (overwriteOldest's case), nobody
		// waiting, no adaptive cap, no hook. holdLog.end, overwriteOldest
		// and the checks before them do the same in general; in one run
		// under the lock it is ~2.5 ns of Acquire+Release's ~71
		// (BENCHMARKS.md, "Acquire+Release: where the last 4.5 ns are").
		l, w := b.holds, &b.win
		if l != nil && l.live == 1 && l.adapt == nil && len(l.items) == 1 && id == l.first && b.front.Waiting() == 0 && b.calls.None() {
			h := &l.items[0]
			if h.live && h.deadline > now && h.n == 1 && w.size == len(w.ring) && w.size >= w.maxN && now >= w.keepUntil() && now >= w.ring[w.newest()] {
				h.live = false
				l.ended++
				l.heldFor += now - h.start
				l.live, l.n = 0, 0
				l.first++
				l.items = l.items[:0]
				w.dropped = max(w.dropped, w.ring[w.head])
				w.ring[w.head] = now
				if w.head++; w.head == len(w.ring) {
					w.head = 0
				}
				b.mu.Mutex.Unlock()
				return
			}
		}
	}
	if b.holds.mayBeDue(now) { // expireHoldsLocked, its check inlined
		b.expireHoldsDueLocked(now)
	}
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
		// dispatchLocked (the holds expired above) if anyone waits: with
		// nobody queued Dispatch grants nobody and only disarms a timer
		// left armed for waiters gone, which then wakes to nothing.
		if b.front.Waiting() > 0 {
			b.front.Dispatch(b.planner(), now)
		}
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
	l := b.holds
	if l.mayBeDue(now) { // expireHoldsLocked, its check inlined
		b.expireHoldsDueLocked(now)
	}
	if b.front.Waiting() > 0 || b.capReachedLocked() {
		return 0, false
	}
	if w := &b.win; len(w.limits) == 1 && w.spacing == 0 {
		// freeAtLocked(1) with window.freeAt's one limit written out: with
		// no spacing, the pause and the need-th newest completion decide.
		need := w.limits[0].N - b.heldLocked()
		if need <= 0 || now < w.pauseUntil {
			return 0, false
		}
		if e, ok := w.fromEnd(need); ok && addSat(e, int64(w.limits[0].Window)) > now {
			return 0, false
		}
	} else if b.freeAtLocked(1) > now {
		return 0, false
	}
	if l == nil {
		l = b.holdLogLocked()
	}
	id := l.add(now, addSat(now, int64(b.hooks.holdTimeout)), 1) // inlined
	b.win.depart(now)
	if s, ok := b.tally.(*bucketCounts); ok && b.hooks.onAdmit == nil {
		s.Admitted++ // all countAdmitLocked does for a caller that did not wait
	} else {
		b.countAdmitLocked(now, now, 1)
	}
	return id, true
}
