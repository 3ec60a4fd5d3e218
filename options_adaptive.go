package rxthrottle

import (
	"fmt"

	"github.com/rxthrottle/rxthrottle/internal/adaptive"
)

type adaptiveOption struct{ min, max int }

func (o adaptiveOption) apply(c *config) {
	c.metering.adaptMin, c.metering.adaptMax, c.metering.adaptSet = o.min, o.max, true
}

// WithAdaptiveConcurrency caps the holds open at once as WithConcurrency
// does, with a cap that moves between min and max from the latencies of
// the holds that complete (SPEC.md, "Adaptive concurrency"): for a server
// whose latency rises with the calls it serves at once, and whose capacity
// moves with its load. The cap starts at min and doubles each round of
// calls that filled it while their latency stayed within 10% of the least
// latency seen in the last 30 s; a round slower than that cuts it by the
// ratio, at most to a quarter; after a cut it grows back by an eighth a
// round.
// A round is a cap's worth of holds that departed after the cap last
// moved; a hold's latency runs from its departure to its Release (or
// ReleaseN of at least one token, or its hold timeout); a hold given back
// unused (Cancel) teaches nothing.
//
// It is a cap as WithConcurrency's is at every instant: a caller over it
// waits in its place in the queue (priorities and tenants as ever), never
// refused, and the window and every other rule still bind. Stats reports
// the cap of the moment (ConcurrencyCap). On a Keyed limiter each key
// learns its own. 1 <= min <= max; it cannot be used with WithConcurrency.
func WithAdaptiveConcurrency(min, max int) Option { return adaptiveOption{min, max} }

// validateAdaptive reports a bad WithAdaptiveConcurrency.
func (m *meteringConfig) validateAdaptive() error {
	switch {
	case !m.adaptSet:
		return nil
	case m.adaptMin < 1 || m.adaptMax < m.adaptMin:
		return fmt.Errorf("rxthrottle: WithAdaptiveConcurrency(%d, %d): want 1 <= min <= max", m.adaptMin, m.adaptMax)
	case m.concurrencySet:
		return fmt.Errorf("rxthrottle: WithAdaptiveConcurrency(%d, %d) with WithConcurrency(%d): one cap at a time", m.adaptMin, m.adaptMax, m.concurrency)
	}
	return nil
}

// newHoldLog returns the log of a bucket's first hold, with the adaptive
// cap if the bucket has one. Requires b.mu.
func (b *Bucket) newHoldLog() *holdLog {
	l := new(holdLog)
	if h := b.hooks; h.adaptMax > 0 {
		l.adapt = adaptive.New(adaptive.Config{Min: h.adaptMin, Max: h.adaptMax})
	}
	return l
}

// concurrencyCapLocked returns the cap on holds open now, 0 for none.
// Requires b.mu.
func (b *Bucket) concurrencyCapLocked() int {
	if b.holds != nil && b.holds.adapt != nil {
		return b.holds.adapt.Cap()
	}
	if b.hooks.adaptMax > 0 {
		return b.hooks.adaptMin
	}
	return b.hooks.concurrency
}
