package redisstore

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// leaseHeld is the limiterkit.TokenReleaserN of a token Acquire took from a
// lease: it stays held in Redis (as leased) until its release, whose
// instant goes to Redis with the pool's next report (on Redis's clock, as
// lease.stamp converts it), or until its lease's deadline.
type leaseHeld struct {
	p     *leasePool
	t     leasedToken
	ended atomic.Bool
}

var _ limiterkit.TokenReleaserN = (*leaseHeld)(nil)

func newLeaseToken(p *leasePool, t leasedToken) rxthrottle.Token {
	return limiterkit.NewToken(&leaseHeld{p: p, t: t}, uint64(t.l.id))
}

// ReleaseToken records the completion now.
func (h *leaseHeld) ReleaseToken(uint64) {
	if h.ended.CompareAndSwap(false, true) {
		h.record(time.Now(), 1)
	}
}

// CancelToken gives the token back unused.
func (h *leaseHeld) CancelToken(uint64) {
	if h.ended.CompareAndSwap(false, true) {
		h.record(time.Time{}, 0)
	}
}

// ReleaseTokenN records the completion now of work that used used tokens:
// 0 gives the token back, more than 1 records the extra as a debt at the
// release (SPEC.md, "Cost known after the call"). It returns an error
// wrapping rxthrottle.ErrTokenEnded if the token was ended before, or if
// its lease deadline has surely passed (the token completed then).
func (h *leaseHeld) ReleaseTokenN(_ uint64, used int) error {
	if used < 0 {
		return fmt.Errorf("redisstore: Token.ReleaseN(%d): used must not be negative", used)
	}
	if !h.ended.CompareAndSwap(false, true) {
		return fmt.Errorf("redisstore: Token.ReleaseN(%d): %w: released or cancelled before", used, rxthrottle.ErrTokenEnded)
	}
	now := time.Now()
	if now.Sub(h.t.l.recv) > durationOf(h.p.s.lim.Load().hold) {
		return fmt.Errorf("redisstore: Token.ReleaseN(%d): %w: its lease deadline passed", used, rxthrottle.ErrTokenEnded)
	}
	h.record(now, used)
	return nil
}

// record reports the token used (used >= 1) at now, or given back (0).
func (h *leaseHeld) record(now time.Time, used int) {
	p := h.p
	p.mu.Lock()
	if used == 0 {
		p.entryLocked(h.t, -1, 0)
	} else {
		p.entryLocked(h.t, h.t.l.stamp(now), used-1)
	}
	p.mu.Unlock()
}
