package rxthrottle

import (
	"context"
	"time"

	"github.com/benbjohnson/clock"
)

// The operators over a Limiter that is not a *Bucket (ThrottleWith,
// ThrottleChan, ThrottleByWith over a KeyedLimiter that is not a *Keyed)
// hold a Token of Acquire for each item until the downstream takes it.
// Such a Token has a hold timeout: one the downstream is slower than
// completes at its deadline, and its token comes back W after, while the
// item is emitted later still, so that the window of emissions, which is
// what the server counts, would hold one more than N (SPEC.md, "Held
// tokens": every completion is no earlier than its arrival). So an item
// is never offered under a Token past half its hold timeout: the Token is
// given back unused (the item has not arrived anywhere) and a new one
// taken, in the item's place, before it is offered again. A *Bucket's and
// a *Keyed's own items hold untimed tokens and need none of this.

// renewal is how long an item may be offered under one Token: half the
// hold timeout of the Token's limiter, on the clock it is read on.
type renewal struct {
	clock clock.Clock
	every time.Duration
}

// minRenewal keeps an absurdly short hold timeout from making the renewal
// spin: an item is offered at least this long under each Token.
const minRenewal = time.Millisecond

// renewalOf returns the renewal of the tokens of l, a Limiter or a
// KeyedLimiter (holdTimeoutOf).
func renewalOf(l any) renewal {
	clk, hold := holdTimeoutOf(l)
	return renewal{clk, max(hold/2, minRenewal)}
}

// sendHeld offers v to out under tok, taken at since, until out's receiver
// takes it (then it releases tok: the completion is read after the
// emission, and reports true) or ctx ends (it gives tok back unused, and
// reports false). Each time tok has been held r.every it gives tok back
// unused and takes a new one with again, which may wait; an error of
// again ends it, with that error and no token held.
func sendHeld[T any](ctx context.Context, r renewal, out chan<- T, v T, tok Token, since time.Time, again func() (Token, error)) (bool, error) {
	// A receiver waiting takes v with no timer to arm, if tok is still
	// young enough: taken long before (ThrottleByWith's item waiting
	// behind other keys' items), its hold may have timed out already.
	if r.clock.Since(since) < r.every {
		select {
		case out <- v:
			tok.Release()
			return true, nil
		default:
		}
	}
	for {
		if left := r.every - r.clock.Since(since); left > 0 {
			tm := r.clock.Timer(left)
			select {
			case out <- v:
				tm.Stop()
				tok.Release()
				return true, nil
			case <-ctx.Done():
				tm.Stop()
				tok.Cancel()
				return false, nil
			case <-tm.C:
			}
		}
		tok.Cancel() // never emitted: back before its hold can time out
		var err error
		if tok, err = again(); err != nil {
			return false, err
		}
		since = r.clock.Now()
	}
}
