package rxthrottle

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// Wait's hot path: a caller that finds its token free and nobody ahead of
// it, with none of the metering options in play, is what a free Wait
// costs, and it is compared with go.uber.org/ratelimit's Take
// (BENCHMARKS.md). Everything here falls back to the general path
// (WaitN, takeLocked) whenever it cannot decide alone.

// Wait blocks until a token is the caller's, then takes it and returns nil;
// the token renews W after that moment. Callers are served in the order
// they called Wait, the higher priority first (WithPriority). If ctx ends
// first, Wait returns ctx.Err() and consumes no token: the callers behind
// move up; if its deadline comes before the earliest instant it could go,
// Wait fails at once with an error wrapping ErrDeadline (and
// context.DeadlineExceeded). If the token is granted at the very moment ctx
// ends, Wait returns nil: the caller went.
func (b *Bucket) Wait(ctx context.Context) error {
	// The hot path, for a token free now and nobody ahead (takeOneLocked):
	// WaitN's checks, with the clock read and the unlock written out here,
	// since each call the compiler cannot inline costs a few nanoseconds of
	// a free Wait's few tens (BENCHMARKS.md, "Bucket.Wait's hot path").
	// Whatever it cannot decide, WaitN does.
	if b != nil && b.hooks != nil && ctx != nil && ctx.Err() == nil {
		if f := b.mu.fast.Load(); f != nil {
			// A token of the budget (wait_fastpath.go): claim one, then
			// read the clock; a claim past the budget, or on a budget
			// closed, counts for nothing.
			s := f.state.Add(2)
			if j := s>>1&fastClaimMask - 1; s&1 != 0 && j < s>>fastSizeShift {
				atomic.StoreInt64(&f.buf[j], int64(time.Since(f.base))) // after the claim
				return nil
			}
		}
		b.mu.Lock()
		now := int64(0)
		if b.hooks.realClock {
			now = int64(time.Since(b.hooks.base)) // b.now(), inlined
		} else {
			now = b.injectedNow()
		}
		if b.takeOneLocked(now) {
			b.openFastLocked(now)
			if b.calls.None() {
				b.mu.Unlock() // b.unlock() with no hook call to make
			} else {
				b.unlock()
			}
			return nil
		}
		b.mu.Unlock()
	}
	return b.WaitN(ctx, 1)
}

// takeOneLocked is takeLocked(now, 1, grantRecord) for a bucket with
// nobody waiting and no token held, the hot path of Wait: it records the
// departure and returns true if the limits, the pause and the spacing let
// one token go at now, and otherwise changes nothing and returns false (the
// general path then decides). Requires b.mu.
func (b *Bucket) takeOneLocked(now int64) bool {
	w := &b.win
	if b.front.Waiting() > 0 || b.heldLocked() > 0 || now < w.pauseUntil {
		return false
	}
	if w.spacing > 0 && w.lastDeparture != math.MinInt64 && now < addSat(w.lastDeparture, w.spacing) {
		return false
	}
	if len(w.limits) == 1 && w.size == w.maxN && w.size == len(w.ring) && now >= w.keepUntil() {
		// The common case, written out: one limit, and a ring full of its
		// last N completions and nothing more (push's last case). The
		// oldest is the one N ago; the new one takes its place if no
		// earlier than the newest (else record decides).
		ring, head := w.ring, w.head
		newest := head - 1
		if head == 0 {
			newest = len(ring) - 1
		}
		oldest := ring[head]
		if addSat(oldest, int64(w.limits[0].Window)) > now || ring[newest] > now {
			return false
		}
		w.dropped = max(w.dropped, oldest)
		ring[head] = now
		if head++; head == len(ring) {
			head = 0
		}
		w.head = head
	} else if w.ext != nil && w.ext.coarse != nil && len(w.limits) == 1 {
		if !w.takeOneCoarse(w.ext.coarse, now) {
			return false
		}
	} else {
		for _, l := range w.limits {
			if e, ok := w.fromEnd(l.N); ok && addSat(e, int64(l.Window)) > now {
				return false
			}
		}
		if !w.overwriteOldest(now) {
			w.record(now)
		}
	}
	w.depart(now)
	if s, ok := b.tally.(*bucketCounts); ok && b.hooks.onAdmit == nil {
		s.Admitted++ // all countAdmitLocked would do for a caller that did not wait
	} else {
		b.countAdmitLocked(now, now, 1)
	}
	return true
}

// acquireFree is Acquire's hot path, as Wait's: a token free now, nobody
// ahead, taken under one lock with none of the calls AcquireN's checks
// need for n = 1. It returns the token held and the reading it departed
// at (its hold's start: the hold times out at that reading plus the hold
// timeout), or ok false, having changed nothing, for the general path
// (AcquireN) to decide. ThrottleMap takes fn's deadline from the reading
// instead of reading the clock again.
func (b *Bucket) acquireFree(ctx context.Context) (tok Token, at int64, ok bool) {
	if b == nil || b.hooks == nil || ctx == nil || ctx.Err() != nil {
		return Token{}, 0, false
	}
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
	{
		// The common grant, written out: no hold live (so none due), no
		// cap, nobody waiting, one limit without spacing, room in the hold
		// log: acquireOneLocked's checks and holdLog.add for that state
		// only, ~2.5 ns of Acquire+Release's ~71 (BENCHMARKS.md,
		// "Acquire+Release: where the last 4.5 ns are"). Whatever else,
		// acquireOneLocked decides.
		l, w := b.holds, &b.win
		if l != nil && l.live == 0 && l.adapt == nil && b.hooks.concurrency == 0 && b.front.Waiting() == 0 &&
			len(w.limits) == 1 && w.spacing == 0 && now >= w.pauseUntil && len(l.items) < cap(l.items) {
			need := w.limits[0].N - l.untimed - l.n
			if need > 0 && need <= w.size {
				j := w.head + w.size - need
				if j >= len(w.ring) {
					j -= len(w.ring)
				}
				if addSat(w.ring[j], int64(w.limits[0].Window)) <= now {
					l.items = l.items[:len(l.items)+1]
					h := &l.items[len(l.items)-1]
					h.deadline, h.start, h.n, h.open, h.live = addSat(now, int64(b.hooks.holdTimeout)), now, 1, int32(l.live+1), true
					l.live++
					l.n++
					id := l.first + uint64(len(l.items)-1)
					w.lastDeparture = max(w.lastDeparture, now)
					if s, ok := b.tally.(*bucketCounts); ok && b.hooks.onAdmit == nil {
						s.Admitted++
					} else {
						b.countAdmitLocked(now, now, 1)
					}
					if b.calls.None() {
						b.mu.Unlock()
					} else {
						b.unlock()
					}
					return Token{r: (*bucketTokens)(b), id: id}, now, true
				}
			}
		}
	}
	id, ok := b.acquireOneLocked(now)
	if ok && b.calls.None() {
		b.mu.Unlock() // b.unlock() with no hook call to make
	} else if ok {
		b.unlock()
	} else {
		b.mu.Unlock()
		return Token{}, 0, false
	}
	return Token{r: (*bucketTokens)(b), id: id}, now, true
}
