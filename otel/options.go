package rxotel

import (
	"errors"
	"fmt"
	"reflect"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// DefaultBuckets returns the bucket boundaries, in seconds, of
// rxthrottle.wait.duration unless WithBuckets says otherwise: rxprom's
// DefaultBuckets. 0 counts the callers that did not wait; the rest spans a
// millisecond to five minutes (a 429's typical pause).
func DefaultBuckets() []float64 {
	return statseries.WaitBuckets()
}

// Option configures Metrics built by New.
type Option interface{ apply(*config) }

type config struct {
	provider metric.MeterProvider
	buckets  []float64
}

type providerOption struct{ mp metric.MeterProvider }

func (o providerOption) apply(c *config) { c.provider = o.mp }

// WithMeterProvider sets where the instruments are made; the default is
// the global one, otel.GetMeterProvider(). nil is an error.
func WithMeterProvider(mp metric.MeterProvider) Option { return providerOption{mp} }

type bucketsOption []float64

func (o bucketsOption) apply(c *config) { c.buckets = o }

// WithBuckets sets the bucket boundaries, in seconds, of
// rxthrottle.wait.duration. They must be increasing and finite; 0 is
// allowed, and counts the callers that did not wait.
func WithBuckets(bounds ...float64) Option { return bucketsOption(bounds) }

// buildConfig applies opts over the defaults and checks the result.
func buildConfig(opts []Option) (config, error) {
	c := config{provider: otel.GetMeterProvider(), buckets: DefaultBuckets()}
	for i, o := range opts {
		if o == nil {
			return c, fmt.Errorf("rxotel: New: option %d is nil", i)
		}
		o.apply(&c)
	}
	if isNil(c.provider) {
		return c, errors.New("rxotel: WithMeterProvider(nil): a MeterProvider is required")
	}
	b, err := statseries.CheckBuckets("rxotel", c.buckets)
	if err != nil {
		return c, err
	}
	c.buckets = b
	return c, nil
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
