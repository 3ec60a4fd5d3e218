package throttletest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/limitrule"
)

// Option configures a Handler or a Server. NewServer reads every option;
// NewHandler returns an error for WithFreshConnections, which it does not
// read.
type Option interface {
	apply(*config)
}

// config holds every option's value; buildConfig sets the defaults and
// validates.
type config struct {
	limits  []rxthrottle.Limit
	next    http.Handler
	clock   clock.Clock
	latency func() time.Duration // nil: none
	fresh   bool
	// dialect, algorithm and bucket: see dialect.go.
	dialect   Dialect
	algorithm Algorithm
	bucket    string
	tokens    rxthrottle.Limit // WithTokenBudget; N == 0 without
	drop      func() bool      // nil: never
	quirks    uint             // WithQuirks: bit q set for each Quirk q
	announced int              // WithAnnouncedLimit; 0 without
	errs      []error          // options that were wrong, reported by buildConfig
}

func buildConfig(limit rxthrottle.Limit, opts []Option) (config, error) {
	c := config{
		limits: []rxthrottle.Limit{limit},
		next:   http.HandlerFunc(ok),
		clock:  clock.New(),
	}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("throttletest: nil Option")
		}
		o.apply(&c)
	}
	if len(c.errs) > 0 {
		return c, c.errs[0]
	}
	for _, l := range c.limits {
		if reason := limitrule.Invalid(l.N, l.Window); reason != "" {
			return c, fmt.Errorf("throttletest: limit %v: %s: %w", l, reason, rxthrottle.ErrInvalidLimit)
		}
	}
	return c, nil
}

// ok is the default handler of accepted requests: 200 OK, "ok".
func ok(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

type limitOption struct{ l rxthrottle.Limit }

func (o limitOption) apply(c *config) { c.limits = append(c.limits, o.l) }

// WithLimit adds a limit enforced together with the first one (for example
// 10 per second and 100 per minute): a request is refused when any limit
// would be exceeded.
func WithLimit(l rxthrottle.Limit) Option { return limitOption{l} }

type handlerOption struct{ h http.Handler }

func (o handlerOption) apply(c *config) {
	if o.h == nil {
		c.errs = append(c.errs, errors.New("throttletest: WithHandler(nil): a handler is required"))
		return
	}
	c.next = o.h
}

// WithHandler sets the handler that answers accepted requests; the default
// answers 200 OK with the body "ok". nil is an error.
func WithHandler(h http.Handler) Option { return handlerOption{h} }

type clockOption struct{ c clock.Clock }

func (o clockOption) apply(c *config) {
	if o.c == nil {
		c.errs = append(c.errs, errors.New("throttletest: WithClock(nil): a clock is required"))
		return
	}
	c.clock = o.c
}

// WithClock sets the clock that stamps arrivals and measures the injected
// latency; the default is the real clock (virtual inside a testing/synctest
// bubble). nil is an error.
func WithClock(c clock.Clock) Option { return clockOption{c} }

type latencyOption struct {
	f   func() time.Duration
	err error
}

func (o latencyOption) apply(c *config) {
	if o.err != nil {
		c.errs = append(c.errs, o.err)
		return
	}
	c.latency = o.f
}

// WithLatency delays every request on its way in by a random duration,
// uniform in [0, max]: the Server's Client delays each write on its
// connections, and Handler.RoundTrip delays each request before serving it.
// Requests from other clients arrive without it. max must not be negative;
// 0 adds no delay.
func WithLatency(max time.Duration) Option {
	if max < 0 {
		return latencyOption{err: fmt.Errorf("throttletest: WithLatency(%v): the latency must not be negative", max)}
	}
	if max == 0 {
		return latencyOption{}
	}
	return latencyOption{f: func() time.Duration { return rand.N(max + 1) }}
}

// WithLatencyFunc delays every request on its way in, as WithLatency does,
// by what f returns (a negative value counts as 0), so that a test can
// force a delay pattern. f is called once per write (once per request for
// Handler.RoundTrip) and must be safe for concurrent use. nil is an error.
func WithLatencyFunc(f func() time.Duration) Option {
	if f == nil {
		return latencyOption{err: errors.New("throttletest: WithLatencyFunc(nil): a function is required")}
	}
	return latencyOption{f: f}
}

type freshOption struct{}

func (freshOption) apply(c *config) { c.fresh = true }

// WithFreshConnections makes a Server close every connection after its
// response (and its Client open a new one for every request), so that each
// request pays for a new TCP connection, as a client whose connections are
// never reused does.
func WithFreshConnections() Option { return freshOption{} }

type dropOption struct {
	f   func() bool
	err error
}

func (o dropOption) apply(c *config) {
	if o.err != nil {
		c.errs = append(c.errs, o.err)
		return
	}
	c.drop = o.f
}

// WithDropFunc makes the server drop the connection of an accepted request,
// after counting it, whenever f returns true: no answer is written, the
// connection is closed (HTTP/1) or the stream reset (HTTP/2), as a server
// that crashes or a proxy that resets after the request arrived. A client
// that sends the request again then makes a second arrival; net/http's
// Transport does so by itself for an idempotent request on a reused
// connection. Handler.RoundTrip returns an error instead of a response. f
// is called once per accepted request, under the Handler's lock: it must
// be quick and must not call the Handler. nil is an error.
func WithDropFunc(f func() bool) Option {
	if f == nil {
		return dropOption{err: errors.New("throttletest: WithDropFunc(nil): a function is required")}
	}
	return dropOption{f: f}
}

// WithDropRate is WithDropFunc dropping each accepted request with
// probability p, from 0 (never) to 1 (always). Any other p, or NaN, is an
// error.
func WithDropRate(p float64) Option {
	if !(p >= 0 && p <= 1) {
		return dropOption{err: fmt.Errorf("throttletest: WithDropRate(%v): the rate must be from 0 to 1", p)}
	}
	return dropOption{f: func() bool { return rand.Float64() < p }}
}
