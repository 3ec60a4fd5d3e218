package httpthrottle

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// DefaultMaxPause is the longest pause a Transport accepts from a server
// unless WithMaxPause says otherwise. A Retry-After or quota reset further
// away is capped to it (and reported to OnHeaderError): one buggy or hostile
// response must not stall a client for days — clients have been told to
// retry in 484,289 hours. It is attempt.DefaultMaxPause, every adapter's.
const DefaultMaxPause = attempt.DefaultMaxPause

// DefaultInFlightBound is attempt.DefaultInFlightBound, the in-flight
// bound of every adapter: the longest a Transport holds the token of a
// request that failed after it may have been written, unless
// WithInFlightBound says otherwise (see Transport for what ends it sooner).
const DefaultInFlightBound = attempt.DefaultInFlightBound

// DefaultMaxAttempts is attempt.DefaultMaxAttempts (3), the number of
// attempts of every adapter: how many times in all a Transport sends a
// request that may be sent twice (see WithMaxAttempts) and was refused
// with 429 Too Many Requests or timed out, unless WithMaxAttempts says
// otherwise.
const DefaultMaxAttempts = attempt.DefaultMaxAttempts

// TransportOption configures a Transport built by NewTransport or
// NewKeyedTransport.
type TransportOption interface {
	apply(*transportConfig)
}

// transportConfig holds every option's value; buildTransportConfig sets the
// defaults and validates.
type transportConfig struct {
	base           http.RoundTripper
	clock          clock.Clock
	policy         attempt.Policy // the in-flight and retry options (package attempt)
	departure      bool
	attemptTimeout time.Duration
	onPushback     func(status int, until time.Time)
	onHeaderError  func(err *HeaderError)
	learn          *learnConfig // WithLearnLimits
	tenant         TenantFunc   // WithTenantFunc
}

func buildTransportConfig(opts []TransportOption) (transportConfig, error) {
	c := transportConfig{
		base:          http.DefaultTransport,
		clock:         clock.New(),
		policy:        attempt.Default(),
		onHeaderError: logHeaderError,
	}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("httpthrottle: nil TransportOption")
		}
		o.apply(&c)
	}
	switch {
	case c.base == nil:
		return c, errors.New("httpthrottle: WithBase(nil): a base RoundTripper is required")
	case c.clock == nil:
		return c, errors.New("httpthrottle: WithClock(nil): a clock is required")
	case c.policy.Check() != nil:
		return c, fmt.Errorf("httpthrottle: %w", c.policy.Check())
	case c.attemptTimeout < 0:
		return c, fmt.Errorf("httpthrottle: WithAttemptTimeout(%v): the timeout must not be negative", c.attemptTimeout)
	}
	if c.onHeaderError == nil {
		c.onHeaderError = func(*HeaderError) {}
	}
	return c, nil
}

// logHeaderError is the default OnHeaderError hook: a warning through
// log/slog's default logger, so that a header the Transport ignores or caps
// is never silent.
func logHeaderError(err *HeaderError) {
	slog.Warn(err.Error(), "header", err.Header, "value", err.Value)
}

type baseOption struct{ rt http.RoundTripper }

func (o baseOption) apply(c *transportConfig) { c.base = o.rt }

// WithBase sets the RoundTripper that sends the requests once they have a
// token; the default is http.DefaultTransport. nil is an error.
func WithBase(rt http.RoundTripper) TransportOption { return baseOption{rt} }

type clockOption struct{ c clock.Clock }

func (o clockOption) apply(c *transportConfig) { c.clock = o.c }

// WithClock makes the Transport read the current time from c when
// it turns a Retry-After or a quota reset into an instant to pause until.
// Give it the clock of the limiter, so both agree on "now". nil is an error.
func WithClock(c clock.Clock) TransportOption { return clockOption{c} }

// WithMaxPause sets the longest pause a server can impose through
// Retry-After or a quota reset (default DefaultMaxPause). Longer requests
// are capped to d and reported to the OnHeaderError hook with
// ErrPauseCapped. d must be positive.
func WithMaxPause(d time.Duration) TransportOption { return policyOption{attempt.MaxPause(d)} }

type policyOption struct{ o attempt.Option }

func (o policyOption) apply(c *transportConfig) { o.o(&c.policy) }

// WithMaxAttempts sets how many times in all the Transport sends a request
// refused with 429 Too Many Requests, or whose attempt timed out
// (WithAttemptTimeout): up to n attempts (default DefaultMaxAttempts, 3;
// 1 never retries).
// Each retry waits for a token like any request, and so waits out the pause
// the 429 caused. Only requests whose body can be sent again are retried:
// no body, http.NoBody, or a GetBody function (which http.NewRequest sets
// for bytes, strings and bytes.Reader bodies). The refused response's body
// is drained and closed before the retry; after the last attempt the 429 is
// returned as it came. A 429 without Retry-After (or quota headers) pauses
// nothing, so its retry goes as soon as the limiter grants the next token.
//
// A timed-out attempt is retried only if the server may safely see the
// request twice, as net/http judges its own re-sends: an idempotent method
// (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) or an Idempotency-Key (or
// X-Idempotency-Key) header, and a body that can be sent again; and only
// while the request's own context lasts. The timed-out attempt stays open
// behind its retry (WithMaxKeptOpen): if its answer comes while the retry
// still waits for its token, that answer is the call's (the server has the
// request and answered it), the retry is never sent and its token, if it
// had come, goes back unused (TransportStats.RetriesAnsweredLate). A late
// answer that is itself a 429 pauses the limiter as any does, and the
// waiting retry becomes its retry. Once the retry has gone, the earlier
// answer is read and thrown away: the retry's own answer, or its timeout,
// is the call's. After the last attempt's timeout, RoundTrip returns that
// timeout. n must be at least 1.
func WithMaxAttempts(n int) TransportOption { return policyOption{attempt.MaxAttempts(n)} }

type onPushbackOption struct{ f func(int, time.Time) }

func (o onPushbackOption) apply(c *transportConfig) { c.onPushback = o.f }

// OnPushback sets a hook called each time a response makes the Transport
// pause its limiter: status is the response's status code and until the
// (capped) end of the pause. It runs on the goroutine of the request, before
// RoundTrip returns; it must be safe for concurrent use.
func OnPushback(f func(status int, until time.Time)) TransportOption {
	return onPushbackOption{f}
}

type onHeaderErrorOption struct{ f func(*HeaderError) }

func (o onHeaderErrorOption) apply(c *transportConfig) { c.onHeaderError = o.f }

// OnHeaderError sets a hook called for every Retry-After or quota header the
// Transport ignores (ErrMalformedHeader) or caps (ErrPauseCapped). The
// default logs a warning through slog.Default(); nil discards the reports.
// It must be safe for concurrent use.
func OnHeaderError(f func(err *HeaderError)) TransportOption { return onHeaderErrorOption{f} }

type departureOption struct{}

func (departureOption) apply(c *transportConfig) { c.departure = true }

// WithDepartureRenewal makes the Transport take its tokens with the
// limiter's Wait, so that a token renews one window after its request left
// rather than after its answer came: the limiter's own schedule, with no
// hold. Requests can then reach the server closer together than the quota
// allows (a new connection, a late wake-up or network jitter delays a
// window's first requests more than the next window's), and a strict
// server refuses some. Use it when the limiter counts something other than
// what the server counts, or when holding is not wanted (streaming
// responses whose headers come late).
func WithDepartureRenewal() TransportOption { return departureOption{} }

// WithInFlightBound sets how long a request can still reach the server
// after its attempt failed (default DefaultInFlightBound). An attempt that
// fails after its request may have been written (its headers went on a
// connection: a timeout, a reset, a context ended in flight, a connection
// dropped before the answer) keeps its token held for d after the error;
// the token renews one window after that. An attempt that fails before
// anything was written gives its token back at once, as if it had never
// been sent. The limiter's hold timeout (rxthrottle.WithHoldTimeout) ends
// every hold at its departure plus that timeout whatever d is, so a d
// above the hold timeout has the hold timeout's effect.
//
// d = 0 releases the token at the error, as if the answer had come: a
// request delayed on its way then reaches the server in a window its
// token no longer counts in, and a strict server may refuse it. d must not
// be negative.
func WithInFlightBound(d time.Duration) TransportOption {
	return policyOption{attempt.InFlightBound(d)}
}

type attemptTimeoutOption struct{ d time.Duration }

func (o attemptTimeoutOption) apply(c *transportConfig) { c.attemptTimeout = o.d }

// WithAttemptTimeout bounds each attempt on the network to d, from the
// moment its token is granted until its response headers arrive: the wait
// for a token does not count (http.Client.Timeout and a context deadline
// do count it, so a short one mostly expires in the queue). An attempt
// past d fails with an error wrapping ErrAttemptTimeout and
// context.DeadlineExceeded; since it may have been written, its token is
// held for the in-flight bound (WithInFlightBound). A re-send of the base
// gets d again from its own token. Reading the response body is not
// bounded by d; the request's context still bounds the whole call, body
// included. A timed-out attempt of a request the server may see twice is
// retried (up to WithMaxAttempts' attempts, DefaultMaxAttempts by
// default), and its late answer may still be the call's (see
// WithMaxAttempts). 0 (the default) sets no timeout; d must not be
// negative.
func WithAttemptTimeout(d time.Duration) TransportOption { return attemptTimeoutOption{d} }

// DefaultMaxKeptOpen is attempt.DefaultMaxKeptOpen, how many attempts a
// Transport keeps open after their callers gave up, waiting for their late
// answers, unless WithMaxKeptOpen says otherwise.
const DefaultMaxKeptOpen = attempt.DefaultMaxKeptOpen

// WithMaxKeptOpen caps the attempts kept open after their caller gave up
// (default DefaultMaxKeptOpen). A caller that gives up on an attempt that
// may have been written (WithAttemptTimeout, or its context ended) gets
// its error at once, but the attempt stays open, under a context of its
// own, until its late answer's headers come (the token is released then:
// the server has the request), the peer closes or resets its connection
// (released then, on a direct connection), or the in-flight bound passes
// (the Transport then closes the connection as a reset and releases the
// token). Each holds a connection and a goroutine meanwhile. Beyond n, a
// given-up attempt is closed at once, as a reset, and its token held for
// the bound. n = 0 keeps none open; n must not be negative.
func WithMaxKeptOpen(n int) TransportOption { return policyOption{attempt.MaxKeptOpen(n)} }

// WithStrictInFlightBound makes a written attempt's token wait for its
// answer or the in-flight bound, never released at the peer's close of the
// connection. On a direct connection, a server that closed or reset the
// connection can no longer read the request from it, so the Transport
// releases the token then (a dropped connection then costs one window, not
// the bound). Behind a proxy or load balancer, the connection's peer is
// the proxy, which may still forward the request after its side closed:
// set this option there. A base that is net/http's Transport with a Proxy
// naming a proxy for the request is treated so without it.
func WithStrictInFlightBound() TransportOption { return policyOption{attempt.StrictInFlightBound()} }

// WithRetryBudget caps the share of the limiter's admissions that the
// Transport's retries may take (attempt.RetryBudget; SPEC.md, "Retry
// budget"): a retry (WithMaxAttempts) is sent only if, with it, the
// retries in every window of W that holds it (the limiter's first
// limit's) are at most ratio times the first attempts in that window plus
// min, counting the admissions up to it; set min to 1 at least. A retry
// over the budget is not sent: RoundTrip returns the refusal as it came
// (TransportStats.RetriesOverBudget). The budget is counted per limiter:
// the Transports, ThrottleMaps and gRPC interceptors over one limiter with
// the same budget count together, and over a redisstore.Bucket every
// process that shares it (in Redis). ratio and min must not be negative.
func WithRetryBudget(ratio float64, min int) TransportOption {
	return policyOption{attempt.WithRetryBudget(ratio, min)}
}
