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

// Transport is an http.RoundTripper that keeps a client within a quota. Every
// request first waits, with its own context, for a token of an
// rxthrottle.Limiter (one quota for all requests) or of an
// rxthrottle.KeyedLimiter (one quota per key: per host, per API path, per
// user); then it goes to the base RoundTripper. A request whose context ends
// while it waits consumes no token, never reaches the base, and fails with
// the context's error.
//
// The Transport also listens to the server. A 429 Too Many Requests or 503
// Service Unavailable with Retry-After, or any response whose quota headers
// (X-RateLimit-*, or the IETF RateLimit fields) say the quota is spent,
// pauses the limiter (for a keyed one, the request's key) until the server
// is ready again, so every other request waits too instead of being refused
// in turn. Pauses are capped by WithMaxPause; headers it cannot use or must
// cap go to OnHeaderError. Retrying a 429 is opt-in: WithMaxAttempts.
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
// fails every request with an error. A Transport is safe for concurrent use, like the limiter it
// wraps.
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
	// Cancelled is the number of requests that failed while waiting for a
	// token (their context ended, or the limiter failed) and were not sent.
	Cancelled uint64
	// Pushbacks is the number of responses that paused the limiter.
	Pushbacks uint64
	// Retries is the number of 429 responses the Transport retried.
	Retries uint64
	// HeaderErrors is the number of reports made to OnHeaderError.
	HeaderErrors uint64
}

// NewTransport returns a Transport that makes every request wait for a token
// of l. It reads the options WithBase, WithClock, WithMaxPause,
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
		return nil, fmt.Errorf("httpthrottle: no key for %s %s: %w", req.Method, redactURL(req.URL), err)
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		out := req
		if attempt > 1 {
			// A retry's body is made before its token is taken: if
			// GetBody fails, nothing is sent and no token is spent.
			if out, err = rewind(req); err != nil {
				return nil, err
			}
		}
		if err := t.wait(req, key); err != nil {
			closeBody(out)
			return nil, err
		}
		t.sent.Add(1)
		resp, err := t.cfg.base.RoundTrip(out)
		if err != nil {
			// The base must close the body, also on error; not every
			// base does. A second Close is harmless for the bodies
			// net/http makes (NopCloser, files, pipes).
			closeBody(out)
			return nil, err
		}
		t.listen(resp, key)
		if resp.StatusCode != http.StatusTooManyRequests || attempt >= t.cfg.maxAttempts || !replayable {
			return resp, nil
		}
		discard(resp.Body)
		t.retries.Add(1)
	}
}

var errZeroTransport = errors.New("httpthrottle: Transport used without NewTransport or NewKeyedTransport")

// wait takes a token for req, or returns the context's error. A context that
// has already ended is refused before the limiter is asked, so that it
// cannot take a free token.
func (t *Transport) wait(req *http.Request, key string) error {
	ctx := req.Context()
	err := ctx.Err()
	if err == nil {
		err = t.gate.wait(ctx, key)
	}
	if err == nil {
		return nil
	}
	t.cancelled.Add(1)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("httpthrottle: waiting for a token for %s %s: %w", req.Method, redactURL(req.URL), err)
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
		return nil, fmt.Errorf("httpthrottle: replaying the body of %s %s for a retry: %w", req.Method, redactURL(req.URL), err)
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
