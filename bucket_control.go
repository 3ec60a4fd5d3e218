package rxthrottle

import (
	"time"

	"github.com/rxthrottle/rxthrottle/internal/admission"
)

// Pause holds every caller back until until: none goes before it, nobody is
// dropped, and the order is kept (a 429's Retry-After). A Pause never
// shortens an earlier, longer one; a time in the past does nothing.
func (b *Bucket) Pause(until time.Time) {
	if b.usable() != nil {
		return
	}
	b.mu.Lock()
	defer b.unlock()
	b.pauseLocked(until, b.now())
}

// pauseLocked raises the pause floor to until and re-plans the queue at
// now. Requires b.mu.
func (b *Bucket) pauseLocked(until time.Time, now int64) {
	b.win.pause(b.offset(until))
	b.dispatchLocked(now)
}

// SetLimit replaces the bucket's limits with limit and more, effective at
// once. The history is kept: every completion that a new limit can look
// back to, and those a replaced limit still had inside its window, so the
// SPEC schedule goes on as if the new limits had always been in force, and
// lowering then raising a limit never lets a window overflow. Lowering N or
// raising W can make the next token later; raising N frees tokens at once.
// Callers already waiting keep their places and go by the new limits; one
// waiting for more tokens than the new smallest N fails with an error
// wrapping ErrInvalidCost (counted in Stats.Cancelled). The limits are validated first; on error nothing
// changes.
func (b *Bucket) SetLimit(limit Limit, more ...Limit) error {
	if err := b.usable(); err != nil {
		return err
	}
	limits, err := validLimits(limit, more...)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.unlock()
	b.setLimitsLocked(limits, b.now())
	return nil
}

// setLimitsLocked requires b.mu.
func (b *Bucket) setLimitsLocked(limits []Limit, now int64) {
	b.win.setLimits(limits, now)
	b.dispatchLocked(now)
}

// Limits returns the limits in force, the first one first.
func (b *Bucket) Limits() []Limit {
	if b.usable() != nil {
		return nil
	}
	b.mu.Lock()
	defer b.unlock()
	return append([]Limit(nil), b.win.limits...)
}

// Stats returns a snapshot of the bucket's counters. It does not allocate.
func (b *Bucket) Stats() Stats {
	if b.usable() != nil {
		return Stats{}
	}
	b.mu.Lock()
	defer b.unlock()
	return b.statsLocked(b.now())
}

// statsLocked requires b.mu.
func (b *Bucket) statsLocked(now int64) Stats {
	b.expireHoldsLocked(now)
	var c admission.Counters
	if own := b.ownCounts(); own != nil {
		c = *own
	}
	return Stats{
		Admitted:  c.Admitted,
		Waited:    c.Waited,
		Cancelled: c.Cancelled,
		Refused:   c.Refused,
		Failed:    c.Failed,
		TotalWait: c.TotalWait,
		MaxWait:   c.MaxWait,
		Queued:    b.waitingLocked(),
		Held:      b.tokensHeldLocked(),
		Free:      b.win.free(now, b.heldLocked()),

		ConcurrencyCap: b.concurrencyCapLocked(),
		Released:       b.holds.endedCount(),
		TotalHold:      b.holds.heldTotal(),
	}
}
