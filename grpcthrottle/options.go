package grpcthrottle

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"
	"google.golang.org/grpc/codes"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// DefaultMaxPause is the longest pause an Interceptor accepts from a
// server unless WithMaxPause says otherwise: a RetryInfo delay or a
// grpc-retry-pushback-ms further away is capped to it, so that one buggy or
// hostile answer cannot stall a client for days. It is
// attempt.DefaultMaxPause, every adapter's (httpthrottle's too).
const DefaultMaxPause = attempt.DefaultMaxPause

// DefaultInFlightBound is attempt.DefaultInFlightBound, the in-flight
// bound of every adapter: how long an Interceptor holds the token of an
// RPC that failed after its request may have been written, unless
// WithInFlightBound says otherwise.
const DefaultInFlightBound = attempt.DefaultInFlightBound

// DefaultMaxAttempts is attempt.DefaultMaxAttempts (3), the number of
// attempts of every adapter for a call that may be sent twice. The unary
// interceptor takes none of its RPCs for one unless WithMaxAttempts is
// given: gRPC says nothing on the wire of whether a method may run twice,
// so by default an RPC is sent once, and a RESOURCE_EXHAUSTED goes back
// to the caller (after pausing the limiter).
const DefaultMaxAttempts = attempt.DefaultMaxAttempts

// DefaultMaxKeptOpen is attempt.DefaultMaxKeptOpen: how many RPCs (unary or streams) an
// Interceptor keeps open after their callers gave up, unless
// WithMaxKeptOpen says otherwise.
const DefaultMaxKeptOpen = attempt.DefaultMaxKeptOpen

// Option configures an Interceptor built by New.
type Option interface{ apply(*config) }

// config holds every option's value; buildConfig sets the defaults and
// validates.
type config struct {
	clock         clock.Clock
	policy        attempt.Policy // the in-flight and retry options (package attempt)
	retries       bool           // WithMaxAttempts was given: RPCs may be sent twice
	perMessage    bool
	onPushback    func(code codes.Code, until time.Time)
	onBadPushback func(err error)
}

func buildConfig(opts []Option) (config, error) {
	c := config{
		clock:         clock.New(),
		policy:        attempt.Default(),
		onBadPushback: logBadPushback,
	}
	for i, o := range opts {
		if o == nil {
			return c, fmt.Errorf("grpcthrottle: New: option %d is nil", i)
		}
		o.apply(&c)
	}
	switch {
	case c.clock == nil:
		return c, errors.New("grpcthrottle: WithClock(nil): a clock is required")
	case c.policy.Check() != nil:
		return c, fmt.Errorf("grpcthrottle: %w", c.policy.Check())
	}
	if c.onBadPushback == nil {
		c.onBadPushback = func(error) {}
	}
	return c, nil
}

// logBadPushback is the default OnBadPushback hook: a warning through
// log/slog's default logger, so that pushback the Interceptor ignores or
// caps is never silent.
func logBadPushback(err error) { slog.Warn(err.Error()) }

type clockOption struct{ c clock.Clock }

func (o clockOption) apply(c *config) { c.clock = o.c }

// WithClock makes the Interceptor read the current time from c: to turn a
// server's retry delay into an instant to pause until, and to time
// WithInFlightBound. Give it the clock of the limiter, so both agree on
// "now". nil is an error.
func WithClock(c clock.Clock) Option { return clockOption{c} }

// WithMaxPause sets the longest pause a server can impose with its retry
// delay (default DefaultMaxPause). Longer delays are capped to d and
// reported to OnBadPushback. d must be positive.
func WithMaxPause(d time.Duration) Option { return policyOption{attempt.MaxPause(d)} }

type policyOption struct{ o attempt.Option }

func (o policyOption) apply(c *config) { o.o(&c.policy) }

// WithMaxAttempts lets the unary interceptor retry an RPC the server
// refused with RESOURCE_EXHAUSTED, up to n attempts in all (1 never
// retries): giving it says that the RPCs made through the interceptor may
// be sent twice, which gRPC does not say on the wire. Without it an RPC is
// sent once (DefaultMaxAttempts applies to the calls other adapters know
// may be sent twice). Each retry waits for a token of its own, and so waits out
// the pause the refusal caused; after the last attempt the refusal is
// returned as it came. Streams are never retried: their messages cannot be
// sent again. n must be at least 1.
func WithMaxAttempts(n int) Option { return maxAttemptsOption(n) }

type maxAttemptsOption int

func (o maxAttemptsOption) apply(c *config) {
	attempt.MaxAttempts(int(o))(&c.policy)
	c.retries = true
}

type perMessageOption struct{}

func (perMessageOption) apply(c *config) { c.perMessage = true }

// WithTokenPerMessage makes each message a stream sends (SendMsg) take a
// token of its own, besides the stream's: for servers that count stream
// messages against the quota. A message's token is held until SendMsg
// returns, when gRPC has the message; a message SendMsg fails to send gives
// its token back. A server does not answer messages one by one, so their
// tokens renew W after they leave: network delay can bunch their arrivals,
// which the stream's own token, held until the server answers, cannot.
func WithTokenPerMessage() Option { return perMessageOption{} }

// WithInFlightBound sets how long a request can still reach the server
// after its RPC failed (default DefaultInFlightBound), as
// httpthrottle.WithInFlightBound does for a Transport. An RPC that fails
// without an answer after its request may have been written (its context
// ended in flight, its connection broke) keeps its token held for d after
// the error; the token renews one window after that. An RPC whose request
// was never written gives its token back at once. The limiter's hold
// timeout (rxthrottle.WithHoldTimeout) ends every hold at its departure
// plus that timeout whatever d is.
//
// d = 0 releases the token at the error, as if the answer had come: a
// request delayed on its way then reaches the server in a window its token
// no longer counts in, and a strict server may refuse it. d must not be
// negative.
func WithInFlightBound(d time.Duration) Option { return policyOption{attempt.InFlightBound(d)} }

type onPushbackOption struct {
	f func(codes.Code, time.Time)
}

func (o onPushbackOption) apply(c *config) { c.onPushback = o.f }

// OnPushback sets a hook called each time a server's answer makes the
// Interceptor pause its limiter: code is the answer's status code and until
// the (capped) end of the pause. It runs on the goroutine of the RPC,
// before the RPC returns; it must be safe for concurrent use.
func OnPushback(f func(code codes.Code, until time.Time)) Option { return onPushbackOption{f} }

type onBadPushbackOption struct{ f func(error) }

func (o onBadPushbackOption) apply(c *config) { c.onBadPushback = o.f }

// OnBadPushback sets a hook called for every retry delay the Interceptor
// ignores (a negative RetryInfo delay, a grpc-retry-pushback-ms that is not
// a number) or caps at WithMaxPause. The default logs a warning through
// slog.Default(); nil discards the reports. It must be safe for concurrent
// use.
func OnBadPushback(f func(err error)) Option { return onBadPushbackOption{f} }

// WithRetryBudget caps the share of the limiter's admissions that the unary
// interceptor's retries may take (attempt.RetryBudget; SPEC.md, "Retry
// budget"): a retry (WithMaxAttempts) is made only if, with it, the
// retries in every window of W that holds it (the limiter's first
// limit's) are at most ratio times the first attempts in that window plus
// min, counting the admissions up to it; set min to 1 at least. Over the
// budget the RPC returns its refusal (Stats.RetriesOverBudget). The budget
// is counted per limiter, with the Transports and ThrottleMaps over it
// that have the same budget, and over a redisstore.Bucket every process
// that shares it (in Redis). ratio and min must not be negative.
func WithRetryBudget(ratio float64, min int) Option {
	return policyOption{attempt.WithRetryBudget(ratio, min)}
}

// WithMaxKeptOpen caps the RPCs kept open after their caller gave up
// (default DefaultMaxKeptOpen), unary RPCs and streams together (see
// Stream for a stream's rule), as httpthrottle.WithMaxKeptOpen does for a
// Transport. A caller whose context ends while its RPC is in flight gets
// CANCELED or DEADLINE_EXCEEDED at once, but the RPC stays open, under a
// context of its own that keeps the caller's deadline (the server still
// gets it as grpc-timeout), until the server is done with it: its late
// answer, or its reset of the stream (a grpc-go server resets it at the
// deadline), releases the token; so does the server's close or reset of
// the connection (not with WithStrictInFlightBound); at the in-flight
// bound the Interceptor cancels the RPC and releases the token. Each holds
// a goroutine and a stream of the connection meanwhile. Beyond n, a
// given-up RPC is cancelled at once and its token held for the bound.
// n = 0 keeps none open; n must not be negative.
func WithMaxKeptOpen(n int) Option { return policyOption{attempt.MaxKeptOpen(n)} }

// WithStrictInFlightBound makes the token of an RPC given up in flight
// wait for the server's answer or the in-flight bound: neither a reset of
// its stream nor the close of its connection releases it. On a direct
// connection to a grpc-go (or any HTTP/2) server, both come from the
// server, which has then read the request or never will; behind an HTTP/2
// proxy or load balancer, they may come from the proxy, which may still
// forward the request: set this option there, as
// httpthrottle.WithStrictInFlightBound.
func WithStrictInFlightBound() Option { return policyOption{attempt.StrictInFlightBound()} }
