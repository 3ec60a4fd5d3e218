package rxthrottle

import (
	"errors"
	"fmt"

	"github.com/rxthrottle/rxthrottle/internal/kit"
)

// ReleaseN is Release for work whose cost is known only once it is done
// (SPEC.md, "Cost known after the call"): an API that charges the tokens a
// model used, or a query's actual points. Acquire n tokens for the
// estimate (AcquireN), then report what the work used:
//   - used <= n: used tokens renew one window after the release, and the
//     other n-used come back at once, unused; ReleaseN(0) is Cancel;
//   - used > n: the n renew one window after the release, and the
//     used-n extra count as departures at the release (a debt, which the
//     server counts too): callers behind wait until the window, debt
//     included, has room. A debt is never refused, however large: it only
//     delays the next callers, by one window at most.
//
// A negative used is an error and changes nothing. On a hold that has
// already ended (Release, Cancel, an earlier ReleaseN, the hold timeout) it
// records nothing and returns an error wrapping ErrTokenEnded. On the zero
// Token it does nothing. A limiter whose tokens cannot report usage (its
// limiterkit.TokenReleaser is not a limiterkit.TokenReleaserN) gets a
// Release instead, and the error says the usage was not recorded.
func (t Token) ReleaseN(used int) error {
	if used < 0 {
		return fmt.Errorf("rxthrottle: Token.ReleaseN(%d): used must not be negative", used)
	}
	if t.r == nil {
		return nil
	}
	rn, ok := t.r.(kit.ReleaserN)
	if !ok {
		t.r.ReleaseToken(t.id)
		return fmt.Errorf("rxthrottle: Token.ReleaseN(%d): %w: the limiter's tokens (%T) were released as used, their usage not recorded", used, errNoUsage, t.r)
	}
	return rn.ReleaseTokenN(t.id, used)
}

// errNoUsage says a limiter's tokens cannot record usage.
var errNoUsage = errors.New("the limiter does not support ReleaseN")

var _ kit.ReleaserN = (*bucketTokens)(nil)

func (t *bucketTokens) ReleaseTokenN(id uint64, used int) error {
	return (*Bucket)(t).endHoldN(id, used)
}

// endHoldN ends hold id as having used used tokens, at a clock reading
// taken under the lock: the used ones (up to what it held, and the debt
// beyond) renew a window after it, the others come back at once.
func (b *Bucket) endHoldN(id uint64, used int) error {
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	b.expireHoldsLocked(now)
	n, ok := b.holds.end(id, now, used > 0)
	if !ok {
		return fmt.Errorf("rxthrottle: Token.ReleaseN(%d): %w: released, cancelled or timed out before", used, ErrTokenEnded)
	}
	switch {
	case used == 0:
		b.uncountLocked()
	case used <= n:
		for range used {
			b.win.record(now)
		}
	default:
		b.win.recordDebt(now, used)
	}
	b.dispatchLocked(now)
	return nil
}
