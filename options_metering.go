package rxthrottle

import (
	"fmt"
	"math"
)

// meteringConfig holds the options that shape calls the way APIs meter
// them: a cap on calls in flight, a bound on the queue, limits per key.
type meteringConfig struct {
	concurrency    int // 0: no cap
	concurrencySet bool
	maxQueue       int // -1: no bound
	maxQueueSet    bool
	keyLimits      func(key string) []Limit
	keyLimitsSet   bool
	// WithAdaptiveConcurrency's bounds.
	adaptMin, adaptMax int
	adaptSet           bool
}

// validate reports a bad metering option, naming it with its argument.
func (m *meteringConfig) validate() error {
	if m.concurrencySet && m.concurrency < 1 {
		return fmt.Errorf("rxthrottle: WithConcurrency(%d): the cap must be at least 1", m.concurrency)
	}
	if m.maxQueueSet && m.maxQueue < 0 {
		return fmt.Errorf("rxthrottle: WithMaxQueue(%d): the bound must not be negative", m.maxQueue)
	}
	if m.keyLimitsSet && m.keyLimits == nil {
		return fmt.Errorf("rxthrottle: WithKeyLimits(nil): a function is required")
	}
	return m.validateAdaptive()
}

// queueRoom returns hooks.queueRoom: 1 + the queue bound, 0 for none.
func (m *meteringConfig) queueRoom() int {
	if !m.maxQueueSet || m.maxQueue == math.MaxInt {
		return 0
	}
	return m.maxQueue + 1
}

// meteredHooks returns c.hooks(agg) with the metering settings.
func (c *config) meteredHooks(agg *aggregate) *hooks {
	h := c.hooks(agg)
	h.concurrency = c.metering.concurrency
	if c.metering.adaptSet {
		h.adaptMin, h.adaptMax = c.metering.adaptMin, c.metering.adaptMax
	}
	h.queueRoom = c.metering.queueRoom()
	return h
}

type concurrencyOption int

func (o concurrencyOption) apply(c *config) {
	c.metering.concurrency, c.metering.concurrencySet = int(o), true
}

// WithConcurrency caps the holds open at once at k (SPEC.md,
// "Concurrency"): a caller that would hold a token (Acquire and AcquireN,
// so a request of an httpthrottle.Transport or a call of ThrottleMap) also
// waits, in its place in the queue, until fewer than k holds are open. A
// hold is open from its departure to its Release, Cancel or hold timeout,
// and frees its place at once when it ends, not a window later. The cap
// counts calls, not tokens (an AcquireN of n is one hold), and never binds
// a Wait, whose token is not held; a Wait queued behind a capped caller
// still waits its turn. On a Keyed limiter the cap is per key. k must be at
// least 1; without the option nothing caps the calls in flight.
func WithConcurrency(k int) Option { return concurrencyOption(k) }

type maxQueueOption int

func (o maxQueueOption) apply(c *config) { c.metering.maxQueue, c.metering.maxQueueSet = int(o), true }

// WithMaxQueue bounds the callers waiting at once at n (SPEC.md, "Queue
// bound"): a caller that would wait while n already wait is refused at
// once, consuming nothing, with an error wrapping ErrQueueFull, and
// counted in Stats.Refused. A caller that goes at once is never refused.
// n = 0 refuses every caller that would wait. On a Keyed limiter the bound
// is per key. Without the option nothing is ever refused: the limiter is
// lossless, and a flood queues without bound. n must not be negative.
func WithMaxQueue(n int) Option { return maxQueueOption(n) }

type keyLimitsOption func(key string) []Limit

func (o keyLimitsOption) apply(c *config) {
	c.metering.keyLimits, c.metering.keyLimitsSet = o, true
	c.keyedOnly = "WithKeyLimits"
}

// WithKeyLimits gives keys limits of their own (SPEC.md, "Keys"): tiers,
// such as a paid user's larger quota. f is called once when a key's
// schedule is made, outside the limiter's locks, with the key; the limits
// it returns (all in force at once, like the limit and WithLimit) are that
// key's until the key is forgotten. A nil or empty result gives the key the
// limiter's limits. Invalid limits, or a panic in f, fail that key's call
// with an error saying so (wrapping ErrInvalidLimit for invalid limits);
// the limiter and its other keys are unaffected. Keyed.SetLimit replaces
// the limits of the other keys and leaves the tiers alone. An option of NewKeyed and
// ThrottleBy; redisstore.NewKeyed reads it too, calling f for every
// admission of a key and recording the key's limits with its shared
// schedule (see there).
func WithKeyLimits(f func(key string) []Limit) Option { return keyLimitsOption(f) }
