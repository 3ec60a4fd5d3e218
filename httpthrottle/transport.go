package httpthrottle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// Transport is an http.RoundTripper that keeps a client within a quota, as
// the server counts it. Every request first waits, with its own context,
// for a token of an rxthrottle.Limiter (one quota for all requests) or of an
// rxthrottle.KeyedLimiter (one quota per key: per host, per API path, per
// user); then it goes to the base RoundTripper.
//
// By default the Transport holds the token (Acquire) from the moment the
// request goes to the base until RoundTrip has the response headers or the
// transport's error, and the token renews one window after that. This is
// the guarantee: however the network delays, reorders or bunches requests
// on the way, the server sees at most the limiter's quota arriving in any
// window, because a token only comes back W after the server has had its
// request (SPEC.md, "Held tokens: renewal on completion"). With
// WithDepartureRenewal a token renews W after the request left (Wait)
// instead. A request that is never sent gives its token back (Token.Cancel):
// its context ended as the token came, or its body could not be made again
// for a retry. A request whose context ends while it waits consumes no
// token, never reaches the base, and fails with the context's error. A held
// token renews, at the latest, at the limiter's hold timeout
// (rxthrottle.WithHoldTimeout, a minute by default) plus W: give the limiter
// a hold timeout above your slowest response.
//
// The Transport also listens to the server. A 429 Too Many Requests or 503
// Service Unavailable with Retry-After, or any response whose quota headers
// (X-RateLimit-*, or the IETF RateLimit fields) say the quota is spent,
// pauses the limiter (for a keyed one, the request's key) until the server
// is ready again, so every other request waits too instead of being refused
// in turn. Pauses are capped by WithMaxPause; headers it cannot use or must
// cap go to OnHeaderError. Retrying a 429 is opt-in: WithMaxAttempts; each
// attempt holds a token of its own.
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
	gate gate
	cfg  transportConfig

	sent, cancelled, pushbacks, retries, headerErrors atomic.Uint64
}

// TransportStats counts what a Transport did since it was built.
type TransportStats struct {
	// Sent is the number of requests handed to the base RoundTripper,
	// retries included.
	Sent uint64
	// Cancelled is the number of attempts that were not sent: their
	// context ended before they went, the limiter failed, or a retry's
	// body could not be made again.
	Cancelled uint64
	// Pushbacks is the number of responses that paused the limiter.
	Pushbacks uint64
	// Retries is the number of 429 responses the Transport retried.
	Retries uint64
	// HeaderErrors is the number of reports made to OnHeaderError.
	HeaderErrors uint64
}

// NewTransport returns a Transport that makes every request wait for a token
// of l, held until the request's answer (see Transport). It reads the
// options WithBase, WithClock, WithDepartureRenewal, WithMaxPause,
// WithMaxAttempts, OnPushback and OnHeaderError. A nil l, a nil option or a
// bad option value is an error.
func NewTransport(l rxthrottle.Limiter, opts ...TransportOption) (*Transport, error) {
	if isNil(l) {
		return nil, errors.New("httpthrottle: NewTransport: the Limiter is nil")
	}
	return newTransport(singleGate{l}, opts)
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
	return newTransport(keyedGate{kl, key}, opts)
}

func newTransport(g gate, opts []TransportOption) (*Transport, error) {
	cfg, err := buildTransportConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Transport{gate: g, cfg: cfg}, nil
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

// RoundTrip waits for a token, sends req through the base RoundTripper,
// pauses the limiter if the response says so, and, with WithMaxAttempts,
// retries a 429. Like every RoundTripper it closes req.Body, also on error,
// and does not modify req.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.gate == nil {
		closeBody(req)
		return nil, errZeroTransport
	}
	key, err := t.gate.key(req)
	if err != nil {
		closeBody(req)
		return nil, wrapError(err, "no key for %s %s", req.Method, redactURL(req.URL))
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		out, tok, err := t.take(req, key, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := t.send(out, key, tok)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests || attempt >= t.cfg.maxAttempts || !replayable {
			return resp, nil
		}
		discard(resp.Body)
		t.retries.Add(1)
	}
}

var errZeroTransport = errors.New("httpthrottle: Transport used without NewTransport or NewKeyedTransport")

// take gets attempt number attempt of req ready to go: its token, and for
// a retry a fresh body from GetBody. An attempt that cannot go takes no
// token: a held token is given back (Token.Cancel); with departure renewal,
// where Wait's token cannot be given back, the body is made before the
// wait. When the attempt cannot go, take closes the body it would have
// sent: the caller's on the first attempt, the fresh one on a retry (the
// caller's went with the first attempt and the base closed it).
func (t *Transport) take(req *http.Request, key string, attempt int) (*http.Request, rxthrottle.Token, error) {
	out := req
	var err error
	if t.cfg.departure {
		if attempt > 1 {
			if out, err = t.rewind(req); err != nil {
				return nil, rxthrottle.Token{}, err
			}
		}
		if _, err := t.wait(req, key, false); err != nil {
			closeBody(out)
			return nil, rxthrottle.Token{}, err
		}
		return out, rxthrottle.Token{}, t.stillWanted(out, rxthrottle.Token{})
	}
	tok, err := t.wait(req, key, true)
	if err != nil {
		if attempt == 1 {
			closeBody(req)
		}
		return nil, rxthrottle.Token{}, err
	}
	if attempt > 1 {
		if out, err = t.rewind(req); err != nil {
			tok.Cancel() // nothing is sent: the token goes back unused
			return nil, rxthrottle.Token{}, err
		}
	}
	return out, tok, t.stillWanted(out, tok)
}

// stillWanted checks, as the token comes, that out's context has not ended
// meanwhile: then the request is not sent, its token goes back unused and
// its body is closed.
func (t *Transport) stillWanted(out *http.Request, tok rxthrottle.Token) error {
	err := out.Context().Err()
	if err != nil {
		tok.Cancel()
		closeBody(out)
		t.cancelled.Add(1)
	}
	return err
}

// send hands out to the base with its token held, listens to the answer,
// and releases the token once the response headers or the error are here
// (also if the base panics): the token renews one window from then. The
// pause, if the answer asks for one, is in place before the token is back.
func (t *Transport) send(out *http.Request, key string, tok rxthrottle.Token) (*http.Response, error) {
	defer tok.Release()
	t.sent.Add(1)
	resp, err := t.cfg.base.RoundTrip(out)
	if err != nil {
		// The base must close the body, also on error; not every base
		// does. A second Close is harmless for the bodies net/http makes
		// (NopCloser, files, pipes).
		closeBody(out)
		return nil, err
	}
	t.listen(resp, key)
	return resp, nil
}

// wait takes a token for req: held (Acquire) when hold is true, renewing
// at departure (Wait) otherwise; or it returns the context's error, or the
// limiter's wrapped. A context that has already ended is refused before the
// limiter is asked, so that it cannot take a free token.
func (t *Transport) wait(req *http.Request, key string, hold bool) (rxthrottle.Token, error) {
	ctx := req.Context()
	var tok rxthrottle.Token
	err := ctx.Err()
	if err == nil {
		if hold {
			tok, err = t.gate.acquire(ctx, key)
		} else {
			err = t.gate.wait(ctx, key)
		}
	}
	if err == nil {
		return tok, nil
	}
	t.cancelled.Add(1)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return tok, err
	}
	return tok, wrapError(err, "waiting for a token for %s %s", req.Method, redactURL(req.URL))
}

// rewind is the package's rewind, counting a failure as an attempt not sent.
func (t *Transport) rewind(req *http.Request) (*http.Request, error) {
	out, err := rewind(req)
	if err != nil {
		t.cancelled.Add(1)
	}
	return out, err
}

// listen reads resp's Retry-After and quota headers and pauses the limiter
// (key's schedule) until the latest instant they ask for, capped at the
// maximum pause. Retry-After counts only on 429 and 503: on a redirect it
// means something else.
func (t *Transport) listen(resp *http.Response, key string) {
	now := t.cfg.clock.Now()
	var hints []pauseHint
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		hint, ok, herr := retryAfter(resp.Header, now)
		t.report(herr)
		if ok {
			hints = append(hints, hint)
		}
	}
	qhints, qerrs := quotaHints(resp.Header, now)
	for _, herr := range qerrs {
		t.report(herr)
	}
	hints = append(hints, qhints...)

	var until time.Time
	for _, h := range hints {
		if wait := h.until.Sub(now); wait > t.cfg.maxPause {
			t.report(&HeaderError{
				Header: h.header,
				Value:  h.value,
				Reason: fmt.Sprintf("asks for a pause of %v, more than the maximum %v; pausing %v", wait, t.cfg.maxPause, t.cfg.maxPause),
				Err:    ErrPauseCapped,
			})
			h.until = now.Add(t.cfg.maxPause)
		}
		if h.until.After(until) {
			until = h.until
		}
	}
	if !until.After(now) {
		return
	}
	t.gate.pause(key, until)
	t.pushbacks.Add(1)
	if t.cfg.onPushback != nil {
		t.cfg.onPushback(resp.StatusCode, until)
	}
}

func (t *Transport) report(herr *HeaderError) {
	if herr == nil {
		return
	}
	t.headerErrors.Add(1)
	t.cfg.onHeaderError(herr)
}

// Stats returns a snapshot of the Transport's counters. The limiter's own
// counters (admitted, waited, total wait) are in its Stats.
func (t *Transport) Stats() TransportStats {
	return TransportStats{
		Sent:         t.sent.Load(),
		Cancelled:    t.cancelled.Load(),
		Pushbacks:    t.pushbacks.Load(),
		Retries:      t.retries.Load(),
		HeaderErrors: t.headerErrors.Load(),
	}
}

// CloseIdleConnections closes the idle connections of the base RoundTripper,
// if it has any; http.Client.CloseIdleConnections calls it.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.cfg.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// rewind returns a copy of req with a fresh body from GetBody, for a retry.
func rewind(req *http.Request) (*http.Request, error) {
	out := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return out, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, wrapError(err, "replaying the body of %s %s for a retry", req.Method, redactURL(req.URL))
	}
	out.Body = body
	return out, nil
}

// maxDrain bounds how much of a refused response is read before closing it:
// enough for any error page, so the connection can be reused, but a huge
// body is cut off rather than downloaded.
const maxDrain = 64 << 10

func discard(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	_ = body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
