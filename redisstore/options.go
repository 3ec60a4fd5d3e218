package redisstore

import (
	"fmt"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// Option configures a Bucket, a Keyed limiter or a GuardStore. It is
// rxthrottle.Option: the options of package rxthrottle (WithLimit,
// WithClock, WithHoldTimeout, WithSpacing, OnWait, OnAdmit) and those of
// this package mix in one list, so moving a limiter from memory to Redis
// changes its constructor and nothing else. Each constructor documents
// which options it reads, and returns an error naming one it does not read
// (WithCallerTime given to NewBucket, rxthrottle.WithLimit given to
// NewGuardStore...), rather than ignore it.
type Option = rxthrottle.Option

// ownOption is the value of one of this package's options, carried by
// limiterkit.NewOption.
type ownOption interface{ apply(*config) }

// newOption returns the Option of this package named name (the function
// that makes it) with value o.
func newOption(name string, o ownOption) Option {
	return limiterkit.NewOption("redisstore."+name, o)
}

// config holds every option's value; buildConfig sets the defaults.
type config struct {
	clock           clock.Clock
	limits          []rxthrottle.Limit // extra limits from WithLimit
	onWait, onAdmit func(rxthrottle.Event)
	timeout         time.Duration
	timeoutSet      bool // WithTimeout given: else the limiters use DefaultTimeout
	policy          FailurePolicy
	onError         func(error)
	callerTime      bool

	retryFirst, retryMax time.Duration // the breaker's back-off

	holdTimeout, spacing, poll time.Duration

	strictConfig bool
	concurrency  int // rxthrottle.WithConcurrency: holds open at once across processes, 0 none
	// rxthrottle.WithAdaptiveConcurrency: this process's cap (capgate.go), adaptMax 0 none
	adaptMin, adaptMax int
	queueBound         int // rxthrottle.WithMaxQueue: this process's callers waiting at once, -1 none

	replicaAck replicaAckOption // WithReplicaAck (replicas.go)

	lease    bool // WithLease (lease.go)
	leaseMax int

	keyLimits func(key string) []rxthrottle.Limit // rxthrottle.WithKeyLimits (NewKeyed only)
}

// The options each constructor reads, by name (limiterkit.Settings.Check).
var (
	limiterReads = []string{
		"rxthrottle.WithLimit", "rxthrottle.WithClock", "rxthrottle.WithHoldTimeout",
		"rxthrottle.WithSpacing", "rxthrottle.OnWait", "rxthrottle.OnAdmit",
		"redisstore.WithTimeout", "redisstore.WithFailurePolicy", "redisstore.WithRetryBackoff",
		"redisstore.WithPollInterval", "redisstore.OnError", "redisstore.WithStrictConfig", "redisstore.WithReplicaAck",
		"rxthrottle.WithConcurrency", "rxthrottle.WithMaxQueue", "rxthrottle.WithAdaptiveConcurrency",
	}
	bucketReads = append(slices.Clone(limiterReads), "redisstore.WithLease")
	keyedReads  = append(slices.Clone(limiterReads), "rxthrottle.WithKeyLimits")
	guardReads  = []string{"redisstore.WithTimeout", "redisstore.OnError", "redisstore.WithCallerTime"}
)

// buildConfig applies opts over the defaults for the constructor ctor
// ("NewBucket"), which reads the options named in reads, and validates the
// result.
func buildConfig(ctor string, reads []string, opts []Option) (config, error) {
	c := config{retryFirst: DefaultRetryFirst, retryMax: DefaultRetryMax}
	s, err := limiterkit.Resolve(opts)
	if err != nil {
		return c, fmt.Errorf("redisstore: %s: %w", ctor, err)
	}
	if err := s.Check("redisstore: "+ctor, reads...); err != nil {
		return c, err
	}
	c.clock, c.limits, c.holdTimeout, c.spacing = s.Clock(), s.Limits(), s.HoldTimeout(), s.Spacing()
	c.onWait, c.onAdmit = s.OnWait(), s.OnAdmit()
	c.concurrency = s.Concurrency()
	c.adaptMin, c.adaptMax, _ = s.AdaptiveConcurrency()
	c.keyLimits = s.KeyLimits()
	c.queueBound = -1
	if q, ok := s.MaxQueue(); ok {
		c.queueBound = q
	}
	for _, e := range s.Extensions() {
		o, ok := e.Value.(ownOption)
		if !ok { // limiterkit.NewOption("redisstore.WithTimeout", 5)
			return c, fmt.Errorf("redisstore: %s: %s is not this package's option (it was made with limiterkit.NewOption)", ctor, e.Name)
		}
		o.apply(&c)
	}
	switch {
	case c.timeout < 0:
		return c, fmt.Errorf("redisstore: WithTimeout(%v): the timeout must not be negative", c.timeout)
	case !c.policy.valid():
		return c, fmt.Errorf("redisstore: WithFailurePolicy(%v): unknown policy", c.policy)
	case micros(c.holdTimeout) > maxWindow:
		return c, fmt.Errorf("redisstore: WithHoldTimeout(%v): want a positive timeout of at most 2^53 µs", c.holdTimeout)
	case micros(c.spacing) > maxWindow:
		return c, fmt.Errorf("redisstore: WithSpacing(%v): want 0 or a positive gap of at most 2^53 µs", c.spacing)
	case c.poll < 0:
		return c, fmt.Errorf("redisstore: WithPollInterval(%v): the interval must not be negative", c.poll)
	case c.retryFirst < 0 || c.retryMax < c.retryFirst || (c.retryFirst == 0) != (c.retryMax == 0):
		return c, fmt.Errorf("redisstore: WithRetryBackoff(%v, %v): want 0 < first <= max, or both 0", c.retryFirst, c.retryMax)
	}
	return c, nil
}

// WithClock is rxthrottle.WithClock: the limiter waits on c instead of the
// real clock. Only the local wait uses it: admission times always come
// from Redis's clock, so that clock skew between processes cannot break
// the window.
//
// Deprecated: use rxthrottle.WithClock, which NewBucket and NewKeyed take.
func WithClock(c clock.Clock) Option { return rxthrottle.WithClock(c) }

// WithLimit is rxthrottle.WithLimit: it adds a limit that must hold at the
// same time as the first one.
//
// Deprecated: use rxthrottle.WithLimit, which NewBucket and NewKeyed take.
func WithLimit(l rxthrottle.Limit) Option { return rxthrottle.WithLimit(l) }

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
func WithTimeout(d time.Duration) Option { return newOption("WithTimeout", timeoutOption{d}) }

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
func WithRetryBackoff(first, max time.Duration) Option {
	return newOption("WithRetryBackoff", retryBackoffOption{first, max})
}

type policyOption struct{ p FailurePolicy }

func (o policyOption) apply(c *config) { c.policy = o.p }

// WithFailurePolicy says what to do when Redis fails: FailClosed (the
// default), FailOpen or FallbackLocal.
func WithFailurePolicy(p FailurePolicy) Option {
	return newOption("WithFailurePolicy", policyOption{p})
}

type onErrorOption struct{ f func(error) }

func (o onErrorOption) apply(c *config) { c.onError = o.f }

// OnError sets a hook called with every failed call to Redis (a
// *StoreError), whatever the FailurePolicy: for logs and metrics, since
// FailOpen and FallbackLocal otherwise hide the failure from the caller.
// Calls that the circuit breaker keeps back are not failures of Redis and
// are not reported, except a Pause or a release, which are then lost. It
// also hears, once per limiter, of a server that may evict the limiter's
// keys (an error wrapping ErrEvictionPolicy, see CheckServer), and once
// of a configuration that differs from the one stored for the quota,
// which the limiter follows (an error wrapping ErrConfigMismatch, see
// WithStrictConfig), and, on a Keyed limiter, once per pair of limit sets
// of a key whose schedule runs under other limits than this process gives
// it (see NewKeyed). It is called
// on the caller's goroutine, before the policy applies; keep it short.
func OnError(f func(error)) Option { return newOption("OnError", onErrorOption{f}) }

type callerTimeOption struct{}

func (callerTimeOption) apply(c *config) { c.callerTime = true }

// WithCallerTime makes a GuardStore decide at the now its caller passes to
// Hit (the Guard's clock) instead of Redis's clock. Use it for tests on
// virtual time, or when every process's clock is trusted; the default,
// Redis's clock, keeps windows exact across machines whose clocks disagree.
func WithCallerTime() Option { return newOption("WithCallerTime", callerTimeOption{}) }

// WithHoldTimeout is rxthrottle.WithHoldTimeout: it bounds how long a
// Token from Acquire counts as held (see NewBucket).
//
// Deprecated: use rxthrottle.WithHoldTimeout, which NewBucket and NewKeyed
// take.
func WithHoldTimeout(d time.Duration) Option { return rxthrottle.WithHoldTimeout(d) }

// WithSpacing is rxthrottle.WithSpacing: a minimum gap d between
// consecutive departures across every process.
//
// Deprecated: use rxthrottle.WithSpacing, which NewBucket and NewKeyed
// take.
func WithSpacing(d time.Duration) Option { return rxthrottle.WithSpacing(d) }

type pollOption time.Duration

func (o pollOption) apply(c *config) { c.poll = time.Duration(o) }

// WithPollInterval sets how long, at most, a caller blocked by tokens held
// in other processes sleeps before it asks Redis again (see Bucket,
// "Held tokens"). The default, 0, picks a quarter of the smallest window,
// from 1ms to 50ms: short enough that a caller learns of a release before
// the released token renews, so it still goes at SPEC.md's instant.
func WithPollInterval(d time.Duration) Option { return newOption("WithPollInterval", pollOption(d)) }

type strictConfigOption struct{}

func (strictConfigOption) apply(c *config) { c.strictConfig = true }

// WithStrictConfig makes a process whose configuration (its limits,
// spacing, hold timeout and concurrency cap) differs from the one stored in Redis for the
// quota fail its calls, with an error wrapping ErrConfigMismatch that
// says both, instead of following the stored one (the default, which
// OnError hears of once). A quota's configuration is stored by the first
// process that uses it, and changed by SetLimit in any process (see
// Bucket.SetLimit); a strict process that has once run under the stored
// configuration follows its later changes. A Keyed limiter's key whose
// schedule runs under other limits than this process gives it
// (rxthrottle.WithKeyLimits: the limits recorded with the key's schedule,
// see NewKeyed) fails its calls the same way, while the key runs under
// them. Use it where a replica built with other limits is a deployment
// mistake to stop, not to absorb.
func WithStrictConfig() Option { return newOption("WithStrictConfig", strictConfigOption{}) }
