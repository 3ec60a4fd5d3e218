package httpthrottle

import (
	"errors"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/attempt"
	"github.com/rxthrottle/rxthrottle/httpthrottle/internal/learn"
)

// Transport is an http.RoundTripper that keeps a client within a quota, as
// the server counts it. Every request first waits, with its own context,
// for a token of an rxthrottle.Limiter (one quota for all requests) or of an
// rxthrottle.KeyedLimiter (one quota per key: per host, per API path, per
// user); then it goes to the base RoundTripper.
//
// By default the Transport holds the token (Acquire) from the moment the
// request goes to the base until the answer is back, and the token renews
// one window after that. This is the guarantee: however the network
// delays, reorders or bunches requests on the way, the server sees at most
// the limiter's quota arriving in any window, because a token only comes
// back W after the server has had its request (SPEC.md, "Held tokens:
// renewal on completion"). "The answer is back" means the request can no
// longer arrive at the server:
//
//   - the response headers came: the server has had the request;
//   - or the attempt failed before its request was written (no connection,
//     or its headers never went): it never will, and the token goes back
//     unused (Token.Cancel), as if the request had never been made;
//   - or the peer closed or reset the connection after the request was
//     written: on a direct connection nothing of it can arrive afterwards,
//     so the token is released then (not behind a proxy, which may still
//     forward it: WithStrictInFlightBound, or a base whose Proxy names one);
//   - or the attempt failed otherwise after its request may have been
//     written: the request may still be on its way, so the token stays
//     held until one of the above shows it can no longer arrive, at most
//     for the in-flight bound after the error (WithInFlightBound,
//     DefaultInFlightBound), and renews W after that.
//
// A caller that gives up (WithAttemptTimeout, or its context ends) gets
// its error at once, but an attempt that may have been written stays open
// behind it, under a context of its own, so that its late answer's headers
// or the peer's close can end the hold early (WithMaxKeptOpen caps how
// many; at most 64 KiB of a late body is read and discarded). When the
// Transport itself gives up on a connection, at the bound or beyond that
// cap, it closes it as a reset (SO_LINGER 0), so that nothing still
// queued in the client's kernel reaches the server later.
//
// Every attempt on the wire takes a token of its own. net/http's Transport
// sends an idempotent request again by itself, on a new connection inside
// one RoundTrip, when a reused connection drops before the answer: the
// server may have counted the first attempt, so the Transport sees the
// re-send coming (net/http/httptrace) and makes it wait for a token before
// it goes. The Transport learns what happened on the wire from the trace
// hooks net/http calls (GetConn, GotConn, WroteHeaders; HTTP/1 and
// HTTP/2); a base that reports nothing is taken to have written every
// request it failed, the safe side. A base of your own must call the
// hooks of the request's context, or pass the request to net/http's
// Transport with its context, and must not return while an attempt is
// still being written.
//
// With WithDepartureRenewal a token renews W after the request left (Wait)
// instead, and nothing is held. A request that is never sent gives its
// token back: its context ended as the token came, or its body could not
// be made again for a retry. A request whose context ends while it waits
// consumes no token, never reaches the base, and fails with the context's
// error. A held token renews, at the latest, at the limiter's hold timeout
// (rxthrottle.WithHoldTimeout, a minute by default) plus W: give the
// limiter a hold timeout above your slowest response.
//
// The request's context (and http.Client.Timeout) bounds the whole call,
// the wait for a token included: a short timeout there mostly expires in
// the queue. To time only the network, use WithAttemptTimeout, whose clock
// starts when the token is granted.
//
// The Transport also listens to the server. A 429 Too Many Requests or 503
// Service Unavailable with Retry-After, or any response whose quota headers
// (X-RateLimit-*, or the IETF RateLimit fields) say the quota is spent,
// pauses the limiter (for a keyed one, the request's key) until the server
// is ready again, so every other request waits too instead of being refused
// in turn. Pauses are capped by WithMaxPause; headers it cannot use or must
// cap go to OnHeaderError. A 429, or an attempt that timed out, of a
// request the server may see twice is retried, up to DefaultMaxAttempts
// (3) attempts in all unless WithMaxAttempts says otherwise: a refused
// request whose body can be sent again, a timed-out one if its method is
// also idempotent or it has an idempotency key. Each attempt holds a
// token of its own, and a timed-out attempt's late answer that comes
// before its retry goes is the call's, the retry never sent.
//
// On HTTP/2, net/http sends a request again by itself when the server
// refused its stream unprocessed (REFUSED_STREAM, a stream above a
// GOAWAY's last one): the refused attempt's token is released then, with
// or without a proxy. Any other reset of a stream is held as an error
// after writing, and the shared connection is never closed for one
// attempt.
//
// The headers it reads:
//
//   - Retry-After, on 429 and 503 only: delay-seconds ("120"), or an
//     HTTP-date as http.ParseTime reads it, taken against the Transport's
//     clock (WithClock). A date in the past asks for no pause.
//   - X-RateLimit-Remaining with X-RateLimit-Reset (GitHub and many
//     others), on any response: a remaining count below 1 pauses until the
//     reset. Servers send the reset either as Unix seconds or as seconds
//     from now, so a value of at least 1e9 is read as Unix seconds (as a
//     delay it would be over 31 years; as a date it is after September
//     2001) and a smaller one as a delay.
//   - RateLimit-Remaining with RateLimit-Reset (IETF draft up to -06), read
//     the same way; with no reset, the longest window w of RateLimit-Policy.
//   - RateLimit of the later IETF drafts, `"default";r=0;t=30` (r
//     remaining, t seconds to the reset; with no t, the w of the
//     RateLimit-Policy member of the same name), or the draft -07 form
//     `limit=10, remaining=0, reset=30`.
//
// When several ask for a pause, the latest end wins.
//
// Build one with NewTransport or NewKeyedTransport; the zero Transport
// fails every request with an error. A Transport is safe for concurrent
// use, like the limiter it wraps.
type Transport struct {
	gate  gate
	cfg   transportConfig
	learn *learn.Learner // WithLearnLimits; nil without

	holds    attempt.Holds    // tokens held past their errors
	keptOpen attempt.KeptOpen // attempts open after their caller gave up
	budget   attempt.Counter  // WithRetryBudget's, shared over the limiter; nil without

	sent, cancelled, pushbacks, retries, headerErrors atomic.Uint64
	resends, unwritten, attemptTimeouts               atomic.Uint64
	lateAnswers, peerCloses, resets, overBudget       atomic.Uint64
	lateAnswered, refusedStreams, failed              atomic.Uint64
}

// NewTransport returns a Transport that makes every request wait for a token
// of l, held until the request's answer (see Transport). It reads the
// options WithBase, WithClock, WithDepartureRenewal, WithMaxPause,
// WithMaxAttempts, WithInFlightBound, WithAttemptTimeout, WithLearnLimits,
// WithTenantFunc, OnPushback and OnHeaderError. A nil l, a nil option or a
// bad option value is an error.
func NewTransport(l rxthrottle.Limiter, opts ...TransportOption) (*Transport, error) {
	if isNil(l) {
		return nil, errors.New("httpthrottle: NewTransport: the Limiter is nil")
	}
	return newTransport(singleGate{l}, l, opts)
}

// NewKeyedTransport returns a Transport that makes every request wait for a
// token of kl under the key that key returns for it: KeyByHost,
// KeyByPathPrefix or a function of your own (a user ID from a header, an API
// token...). A request whose key function fails is not sent; RoundTrip
// returns an error wrapping the key function's. Pushback pauses only the
// request's key. It reads the same options as NewTransport; a nil kl or key
// is an error.
func NewKeyedTransport(kl rxthrottle.KeyedLimiter, key KeyFunc, opts ...TransportOption) (*Transport, error) {
	if isNil(kl) {
		return nil, errors.New("httpthrottle: NewKeyedTransport: the KeyedLimiter is nil")
	}
	if key == nil {
		return nil, errors.New("httpthrottle: NewKeyedTransport: the key function is nil")
	}
	return newTransport(keyedGate{kl, key}, kl, opts)
}

// limitsOwner is a Limiter or a KeyedLimiter, as the retry budget sees it:
// its identity and its window.
type limitsOwner interface{ Limits() []rxthrottle.Limit }

func newTransport(g gate, owner limitsOwner, opts []TransportOption) (*Transport, error) {
	cfg, err := buildTransportConfig(opts)
	if err != nil {
		return nil, err
	}
	t := &Transport{gate: g, cfg: cfg}
	t.budget = cfg.policy.BudgetFor(owner, func() time.Duration {
		if ls := owner.Limits(); len(ls) > 0 { // a limiter of none breaks its contract: not a panic here
			return ls[0].Window
		}
		return 0
	})
	if cfg.learn != nil {
		if t.learn, err = newLearner(*cfg.learn, cfg, g); err != nil {
			return nil, err
		}
		t.gate = learnGate{g, t.learn}
	}
	return t, nil
}

// isNil reports whether v is nil or a nil pointer in an interface, which
// would otherwise pass the nil check and panic on the first request.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

var errZeroTransport = errors.New("httpthrottle: Transport used without NewTransport or NewKeyedTransport")

// CloseIdleConnections closes the idle connections of the base RoundTripper,
// if it has any; http.Client.CloseIdleConnections calls it.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.cfg.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
