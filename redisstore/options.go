package redisstore

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
)

// Option configures a Bucket, a Keyed limiter or a GuardStore. Each
// constructor documents which options it reads, and returns an error for
// one it does not read (WithCallerTime given to NewBucket, WithHoldTimeout
// given to NewGuardStore...), rather than ignore it.
type Option interface {
	apply(*config)
}

// config holds every option's value; buildConfig sets the defaults.
type config struct {
	clock      clock.Clock
	limits     []rxthrottle.Limit // extra limits from WithLimit
	timeout    time.Duration
	timeoutSet bool // WithTimeout given: else the limiters use DefaultTimeout
	policy     FailurePolicy
	onError    func(error)
	callerTime bool

	retryFirst, retryMax time.Duration // the breaker's back-off

	holdTimeout, spacing, poll time.Duration

	// The name of the first option given that only NewBucket and NewKeyed
	// read, and of the first that only NewGuardStore reads; "" if none.
	limiterOnly, guardOnly string
}

func buildConfig(opts []Option) (config, error) {
	c := config{clock: clock.New(), retryFirst: DefaultRetryFirst, retryMax: DefaultRetryMax, holdTimeout: rxthrottle.DefaultHoldTimeout}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("redisstore: nil Option")
		}
		o.apply(&c)
		switch o.(type) {
		case timeoutOption, onErrorOption: // read by every constructor
		case callerTimeOption:
			c.guardOnly = cmp.Or(c.guardOnly, "WithCallerTime")
		default:
			c.limiterOnly = cmp.Or(c.limiterOnly, optionName(o))
		}
	}
	switch {
	case c.clock == nil:
		return c, errors.New("redisstore: WithClock(nil): a clock is required")
	case c.timeout < 0:
		return c, fmt.Errorf("redisstore: WithTimeout(%v): the timeout must not be negative", c.timeout)
	case !c.policy.valid():
		return c, fmt.Errorf("redisstore: WithFailurePolicy(%v): unknown policy", c.policy)
	case c.holdTimeout <= 0 || micros(c.holdTimeout) > maxWindow:
		return c, fmt.Errorf("redisstore: WithHoldTimeout(%v): want a positive timeout of at most 2^53 µs", c.holdTimeout)
	case c.spacing < 0 || micros(c.spacing) > maxWindow:
		return c, fmt.Errorf("redisstore: WithSpacing(%v): want 0 or a positive gap of at most 2^53 µs", c.spacing)
	case c.poll < 0:
		return c, fmt.Errorf("redisstore: WithPollInterval(%v): the interval must not be negative", c.poll)
	case c.retryFirst < 0 || c.retryMax < c.retryFirst || (c.retryFirst == 0) != (c.retryMax == 0):
		return c, fmt.Errorf("redisstore: WithRetryBackoff(%v, %v): want 0 < first <= max, or both 0", c.retryFirst, c.retryMax)
	}
	return c, nil
}

// optionName is the name of the function that made o, for errors.
func optionName(o Option) string {
	switch o.(type) {
	case clockOption:
		return "WithClock"
	case limitOption:
		return "WithLimit"
	case timeoutOption:
		return "WithTimeout"
	case retryBackoffOption:
		return "WithRetryBackoff"
	case policyOption:
		return "WithFailurePolicy"
	case onErrorOption:
		return "OnError"
	case callerTimeOption:
		return "WithCallerTime"
	case holdTimeoutOption:
		return "WithHoldTimeout"
	case spacingOption:
		return "WithSpacing"
	case pollOption:
		return "WithPollInterval"
	}
	return fmt.Sprintf("%T", o)
}

// readByLimiters returns an error if c has an option that NewBucket and
// NewKeyed do not read; ctor names the constructor.
func (c *config) readByLimiters(ctor string) error {
	if c.guardOnly != "" {
		return fmt.Errorf("redisstore: %s does not read %s: it is an option of NewGuardStore", ctor, c.guardOnly)
	}
	return nil
}

// readByGuardStore returns an error if c has an option that NewGuardStore
// does not read.
func (c *config) readByGuardStore() error {
	if c.limiterOnly != "" {
		return fmt.Errorf("redisstore: NewGuardStore does not read %s: it is an option of NewBucket and NewKeyed", c.limiterOnly)
	}
	return nil
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

func (o timeoutOption) apply(c *config) { c.timeout, c.timeoutSet = o.d, true }

// WithTimeout bounds each call to Redis (one admission, release, pause,
// guard hit or configuration check) to d, through a context deadline: the
// dial and its retries, the command's retries, and the reads and writes on
// the socket. A call that runs out of time is a store failure, handled by
// the FailurePolicy (and the circuit breaker, see WithRetryBackoff), and
// its error wraps context.DeadlineExceeded.
//
// A Bucket or a Keyed limiter never waits for a call longer than d, with
// any client: go-redis applies a context's deadline to the socket only if
// the client was built with ContextTimeoutEnabled: true, and without it
// the call goes on in the background (until the client's ReadTimeout)
// while the caller has its answer from the FailurePolicy. An admission
// whose answer comes after its caller stopped waiting is withdrawn. A
// GuardStore given WithTimeout(d > 0) and a *redis.Client,
// *redis.ClusterClient or *redis.Ring without ContextTimeoutEnabled
// returns an error instead (its calls run on the caller's goroutine).
//
// Without WithTimeout, a Bucket or a Keyed limiter bounds each call to
// DefaultTimeout (500ms): so the first call of an outage fails after at
// most that, not after go-redis's dial retries (about 1.7 s with its
// defaults), or a stalled server's ReadTimeout (3 s) per attempt; then the
// circuit breaker answers at once. WithTimeout(0) adds no bound of its
// own: the caller's context and the client's settings bound each call
// (a release, a cancel, a withdrawal or a pause, which have no context of
// the caller's, one second). A GuardStore has no default bound. A
// deadline costs a timer and a few allocations per call.
func WithTimeout(d time.Duration) Option { return timeoutOption{d} }

type retryBackoffOption struct{ first, max time.Duration }

func (o retryBackoffOption) apply(c *config) { c.retryFirst, c.retryMax = o.first, o.max }

// WithRetryBackoff sets the circuit breaker's back-off: after a failed call
// to Redis, the limiter sends nothing to Redis for first (on the WithClock
// clock), and the FailurePolicy answers every call at once: FailOpen lets
// it go, FallbackLocal waits on the local limiter, FailClosed returns a
// *StoreError wrapping ErrStoreUnavailable and ErrCircuitOpen. OnError
// hears only of calls that were sent and failed, not of those the breaker
// kept back (except a lost Pause or release, which it reports).
//
// When the back-off is over, the next caller is the probe: its call goes
// to Redis (one probe at a time; the others keep the fallback). If Redis
// answers, the limiter is back on Redis for every caller; if not, the
// back-off doubles, up to max. So a refused or stalled Redis costs one slow
// call (bounded by WithTimeout) per back-off, not one per caller, and the
// limiter is back on Redis at most max (plus one call) after Redis is.
//
// The defaults are DefaultRetryFirst (100ms) and DefaultRetryMax (2s).
// WithRetryBackoff(0, 0) turns the breaker off: every call goes to Redis.
func WithRetryBackoff(first, max time.Duration) Option { return retryBackoffOption{first, max} }

type policyOption struct{ p FailurePolicy }

func (o policyOption) apply(c *config) { c.policy = o.p }

// WithFailurePolicy says what to do when Redis fails: FailClosed (the
// default), FailOpen or FallbackLocal.
func WithFailurePolicy(p FailurePolicy) Option { return policyOption{p} }

type onErrorOption struct{ f func(error) }

func (o onErrorOption) apply(c *config) { c.onError = o.f }

// OnError sets a hook called with every failed call to Redis (a
// *StoreError), whatever the FailurePolicy: for logs and metrics, since
// FailOpen and FallbackLocal otherwise hide the failure from the caller.
// Calls that the circuit breaker keeps back are not failures of Redis and
// are not reported, except a Pause or a release, which are then lost. It
// also hears, once per limiter, of a server that may evict the limiter's
// keys (an error wrapping ErrEvictionPolicy, see CheckServer). It is called
// on the caller's goroutine, before the policy applies; keep it short.
func OnError(f func(error)) Option { return onErrorOption{f} }

type callerTimeOption struct{}

func (callerTimeOption) apply(c *config) { c.callerTime = true }

// WithCallerTime makes a GuardStore decide at the now its caller passes to
// Hit (the Guard's clock) instead of Redis's clock. Use it for tests on
// virtual time, or when every process's clock is trusted; the default,
// Redis's clock, keeps windows exact across machines whose clocks disagree.
func WithCallerTime() Option { return callerTimeOption{} }

type holdTimeoutOption time.Duration

func (o holdTimeoutOption) apply(c *config) { c.holdTimeout = time.Duration(o) }

// WithHoldTimeout bounds how long a Token from Acquire counts as held, as
// rxthrottle.WithHoldTimeout does: the hold is a lease in Redis whose
// deadline is the departure plus d on Redis's clock; a Token not released
// by then completes at the deadline and renews W after it, so a process
// that dies holding tokens keeps them only until their deadline. A
// Release after the deadline changes nothing. The default is
// rxthrottle.DefaultHoldTimeout (1 minute); d must be positive.
func WithHoldTimeout(d time.Duration) Option { return holdTimeoutOption(d) }

type spacingOption time.Duration

func (o spacingOption) apply(c *config) { c.spacing = time.Duration(o) }

// WithSpacing sets a minimum gap d between consecutive departures across
// every process (SPEC.md, "Spacing"), on top of the limits, as
// rxthrottle.WithSpacing does; the script applies it on Redis's clock. A
// WaitN or AcquireN of n tokens is one departure. 0, the default, adds
// nothing. Every process sharing the limiter must use the same spacing.
func WithSpacing(d time.Duration) Option { return spacingOption(d) }

type pollOption time.Duration

func (o pollOption) apply(c *config) { c.poll = time.Duration(o) }

// WithPollInterval sets how long, at most, a caller blocked by tokens held
// in other processes sleeps before it asks Redis again (see Bucket,
// "Held tokens"). The default, 0, picks a quarter of the smallest window,
// from 1ms to 50ms: short enough that a caller learns of a release before
// the released token renews, so it still goes at SPEC.md's instant.
func WithPollInterval(d time.Duration) Option { return pollOption(d) }
