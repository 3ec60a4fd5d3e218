package rxthrottle

import (
	"cmp"
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// The options of ThrottleMap's calls. They are Options, so that
// ThrottleMap takes them beside NewBucket's, but configure no limiter:
// ThrottleMap takes them out before it builds its Bucket, and a limiter's
// constructor given one refuses it (config.mapOnly).

// mapConfig is what the options of ThrottleMap's calls set: the in-flight
// and retry policy every adapter shares (package attempt).
type mapConfig struct {
	policy attempt.Policy
	own    bool // the Limiter is the subscription's own (ThrottleMap): so is its retry budget
}

// mapOption is an Option of ThrottleMap's calls.
type mapOption interface {
	Option
	applyMap(*mapConfig)
}

type inFlightBoundOption time.Duration

func (inFlightBoundOption) apply(c *config) { c.mapOnly = cmp.Or(c.mapOnly, "WithInFlightBound") }
func (o inFlightBoundOption) applyMap(c *mapConfig) {
	attempt.InFlightBound(time.Duration(o))(&c.policy)
}

// WithInFlightBound sets how long ThrottleMap holds the token of a call
// whose error says neither NotSent nor Answered (default
// DefaultInFlightBound): the request may have been sent (a timeout, a
// reset, a context ended in flight) and can still reach the server that
// long after the error, so its token renews one window after the bound,
// not after the error. The Limiter's hold timeout ends every hold at its
// departure plus that timeout whatever d is. d = 0 releases the token at
// the error, as if every error were an answer. d must not be negative.
// It is an option of ThrottleMap and ThrottleMapWith only.
func WithInFlightBound(d time.Duration) Option { return inFlightBoundOption(d) }

type maxAttemptsOption int

func (maxAttemptsOption) apply(c *config)         { c.mapOnly = cmp.Or(c.mapOnly, "WithMaxAttempts") }
func (o maxAttemptsOption) applyMap(c *mapConfig) { attempt.MaxAttempts(int(o))(&c.policy) }

// WithMaxAttempts sets how many times in all ThrottleMap calls fn for an
// item that fn answers with RetryAfter (default DefaultMaxAttempts); 1
// never retries. n must be at least 1. It is an option of ThrottleMap and
// ThrottleMapWith only.
func WithMaxAttempts(n int) Option { return maxAttemptsOption(n) }

type retryBudgetOption attempt.RetryBudget

func (retryBudgetOption) apply(c *config) { c.mapOnly = cmp.Or(c.mapOnly, "WithRetryBudget") }
func (o retryBudgetOption) applyMap(c *mapConfig) {
	attempt.WithRetryBudget(o.Ratio, o.Min)(&c.policy)
}

// WithRetryBudget caps the share of the Limiter's admissions that
// ThrottleMap's retries (RetryAfter with WithMaxAttempts) may take
// (attempt.RetryBudget; SPEC.md, "Retry budget"): a retry is made only if,
// with it, the retries in every window of W that holds it (the Limiter's
// first limit's) are at most ratio times the first calls in that window
// plus min, counting the calls up to it; set min to 1 at least. Over the budget, the item's output is the error of its last
// refusal. The budget is counted per Limiter: the ThrottleMaps,
// Transports and gRPC interceptors over one Limiter with the same budget
// count together, and over a redisstore.Bucket every process that shares
// it (in Redis). ratio and min must not be negative. It is an option of
// ThrottleMap and ThrottleMapWith only.
func WithRetryBudget(ratio float64, min int) Option {
	return retryBudgetOption{Ratio: ratio, Min: min}
}

// splitMapOptions returns the options of the calls applied over their
// defaults, and the other options, for the Bucket.
func splitMapOptions(op string, opts []Option) (mapConfig, []Option, error) {
	c := mapConfig{policy: attempt.Default()}
	var rest []Option
	for _, o := range opts {
		if mo, ok := o.(mapOption); ok {
			mo.applyMap(&c)
			continue
		}
		rest = append(rest, o)
	}
	if err := c.policy.Check(); err != nil {
		return c, nil, fmt.Errorf("rxthrottle: %s: %w", op, err)
	}
	return c, rest, nil
}

// mapBudget returns the retry budget of a ThrottleMap over l: nil without
// WithRetryBudget, the subscription's own over its own Bucket, else the
// one every adapter over l shares.
func mapBudget(l Limiter, c mapConfig) attempt.Counter {
	window := func() time.Duration {
		if ls := l.Limits(); len(ls) > 0 { // a Limiter of none breaks its contract: not a panic here
			return ls[0].Window
		}
		return 0
	}
	if c.policy.Budget != nil && c.own {
		b, _ := attempt.NewBudget(*c.policy.Budget, window) // checked by splitMapOptions
		return b
	}
	return c.policy.BudgetFor(l, window)
}
