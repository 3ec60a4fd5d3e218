package rxprom

import (
	"fmt"

	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// DefaultBuckets returns the upper bounds, in seconds, of
// rxthrottle_wait_seconds unless WithBuckets says otherwise: 0 counts the
// callers that did not wait, the rest spans a millisecond to five minutes
// (a 429's typical pause). Each call returns a new slice.
func DefaultBuckets() []float64 {
	return statseries.WaitBuckets()
}

// Option configures a Collector.
type Option interface{ apply(*config) }

type config struct {
	buckets []float64
}

type bucketsOption []float64

func (o bucketsOption) apply(c *config) { c.buckets = o }

// WithBuckets sets the upper bounds, in seconds, of the buckets of
// rxthrottle_wait_seconds (+Inf is implied). They must be increasing and
// finite; 0 is allowed, and counts the callers that did not wait.
func WithBuckets(bounds ...float64) Option { return bucketsOption(bounds) }

// buildConfig applies opts over the defaults and checks the result.
func buildConfig(opts []Option) (config, error) {
	c := config{buckets: DefaultBuckets()}
	for i, o := range opts {
		if o == nil {
			return c, fmt.Errorf("rxprom: NewCollector: option %d is nil", i)
		}
		o.apply(&c)
	}
	b, err := statseries.CheckBuckets("rxprom", c.buckets)
	if err != nil {
		return c, err
	}
	c.buckets = b
	return c, nil
}
