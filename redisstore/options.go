package redisstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
)

// Option configures a Bucket, a Keyed limiter or a GuardStore. Each
// constructor documents which options it reads; the others are ignored.
type Option interface {
	apply(*config)
}

// config holds every option's value; buildConfig sets the defaults.
type config struct {
	clock      clock.Clock
	limits     []rxthrottle.Limit // extra limits from WithLimit
	timeout    time.Duration
	policy     FailurePolicy
	onError    func(error)
	callerTime bool
}

func buildConfig(opts []Option) (config, error) {
	c := config{clock: clock.New()}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("redisstore: nil Option")
		}
		o.apply(&c)
	}
	switch {
	case c.clock == nil:
		return c, errors.New("redisstore: WithClock(nil): a clock is required")
	case c.timeout < 0:
		return c, fmt.Errorf("redisstore: WithTimeout(%v): the timeout must not be negative", c.timeout)
	case !c.policy.valid():
		return c, fmt.Errorf("redisstore: WithFailurePolicy(%v): unknown policy", c.policy)
	}
	return c, nil
}

type clockOption struct{ c clock.Clock }

func (o clockOption) apply(c *config) { c.clock = o.c }

// WithClock makes the limiter wait on c instead of the real clock. Only the
// local wait uses it: admission times always come from Redis's clock, so
// that clock skew between processes cannot break the window.
func WithClock(c clock.Clock) Option { return clockOption{c} }

type limitOption struct{ l rxthrottle.Limit }

func (o limitOption) apply(c *config) { c.limits = append(c.limits, o.l) }

// WithLimit adds a limit that must hold at the same time as the first one,
// as rxthrottle.WithLimit does for the in-memory bucket:
// NewBucket(rdb, "api", rxthrottle.Per(5, time.Second),
// WithLimit(rxthrottle.Per(100, time.Minute))).
func WithLimit(l rxthrottle.Limit) Option { return limitOption{l} }

type timeoutOption struct{ d time.Duration }

func (o timeoutOption) apply(c *config) { c.timeout = o.d }

// WithTimeout bounds each call to Redis (one admission, release, pause or
// guard hit) to d, through a context deadline. A call that runs out of time
// is a store failure, handled by the FailurePolicy, and its error wraps
// context.DeadlineExceeded.
//
// The default, 0, adds no deadline of its own: the caller's context and
// the client's own timeouts bound each call (go-redis: DialTimeout 5s,
// ReadTimeout 5s, WriteTimeout as ReadTimeout, and a refused connection
// fails at once). That is what most services want, and it costs nothing;
// a deadline costs a timer and four allocations per call.
//
// go-redis applies a context deadline to the socket only if the client was
// built with ContextTimeoutEnabled: true; otherwise its ReadTimeout and
// WriteTimeout are what bound a stalled call. Set ContextTimeoutEnabled for
// d to take effect against a server that accepts but does not answer.
func WithTimeout(d time.Duration) Option { return timeoutOption{d} }

type policyOption struct{ p FailurePolicy }

func (o policyOption) apply(c *config) { c.policy = o.p }

// WithFailurePolicy says what to do when Redis fails: FailClosed (the
// default), FailOpen or FallbackLocal.
func WithFailurePolicy(p FailurePolicy) Option { return policyOption{p} }

type onErrorOption struct{ f func(error) }

func (o onErrorOption) apply(c *config) { c.onError = o.f }

// OnError sets a hook called with every failed call to Redis (a
// *StoreError), whatever the FailurePolicy: for logs and metrics, since
// FailOpen and FallbackLocal otherwise hide the failure from the caller. It
// is called on the caller's goroutine, before the policy applies; keep it
// short.
func OnError(f func(error)) Option { return onErrorOption{f} }

type callerTimeOption struct{}

func (callerTimeOption) apply(c *config) { c.callerTime = true }

// UseCallerTime makes a GuardStore decide at the now its caller passes to
// Hit (the Guard's clock) instead of Redis's clock. Use it for tests on
// virtual time, or when every process's clock is trusted; the default,
// Redis's clock, keeps windows exact across machines whose clocks disagree.
func UseCallerTime() Option { return callerTimeOption{} }
