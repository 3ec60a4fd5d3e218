package httpthrottle

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// ForCall returns an http.Client for the call of a ThrottleMap function
// whose context is ctx, so that ThrottleMap sees every arrival its
// requests make (SPEC.md, "Held tokens"):
//
//	fn := func(ctx context.Context, item any) (any, error) {
//		req, err := http.NewRequestWithContext(ctx, http.MethodGet, item.(string), nil)
//		...
//		resp, err := httpthrottle.ForCall(ctx).Do(req)
//
// The client's first request goes with the token ThrottleMap holds for the
// call (rxthrottle.TakeCallToken), and every further attempt on the wire
// (net/http's own re-send on a reused connection that dropped, another
// request of fn) waits for a token of its own from ThrottleMap's Limiter.
// Each token is ended as a Transport ends it: released at the answer,
// given back if the request was never written, released at the peer's
// close of a direct connection, and otherwise held past the error until
// the request cannot arrive (a late answer, or the in-flight bound). fn's
// context ending (its deadline, ThrottleMap's hold timeout) is a caller
// giving up: the attempt stays open behind it (WithMaxKeptOpen). fn's
// error then says nothing of the token; a RetryAfter still pauses the
// Limiter and calls fn again.
//
// Make the client when fn sends: a client made and never used leaves the
// call's token held until the Limiter's hold timeout, as does one whose
// first request comes after fn's context has ended.
//
// With WithAttemptTimeout, the client retries a timed-out attempt of a
// request the server may see twice itself (up to WithMaxAttempts'
// attempts, DefaultMaxAttempts by default), with a token of its own from the Limiter, and
// the timed-out attempt's late answer, if it comes before the retry goes,
// is the answer fn gets (see WithMaxAttempts).
//
// opts are a Transport's options (WithBase, WithAttemptTimeout,
// WithInFlightBound...). Outside a ThrottleMap call, or with a bad option,
// every request of the client fails with an error saying so, sending
// nothing.
func ForCall(ctx context.Context, opts ...TransportOption) *http.Client {
	tok, l, ok := rxthrottle.TakeCallToken(ctx)
	if !ok {
		return &http.Client{Transport: failing{errNoCall}}
	}
	t, err := newTransport(&callGate{l: l, first: tok}, l, opts)
	if err != nil {
		tok.Cancel()
		return &http.Client{Transport: failing{err}}
	}
	return &http.Client{Transport: t}
}

var errNoCall = errors.New("httpthrottle: ForCall: the context is not that of a ThrottleMap call, or its token was taken")

// failing fails every request with err, sending nothing.
type failing struct{ err error }

func (f failing) RoundTrip(req *http.Request) (*http.Response, error) {
	closeBody(req)
	return nil, f.err
}

// callGate is a ThrottleMap call's Limiter with the call's token as the
// first one it hands out.
type callGate struct {
	l     rxthrottle.Limiter
	mu    sync.Mutex
	first rxthrottle.Token // zero once handed out
}

func (g *callGate) key(*http.Request) (string, error) { return "", nil }

func (g *callGate) take() (rxthrottle.Token, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tok := g.first
	g.first = rxthrottle.Token{}
	return tok, tok != rxthrottle.Token{}
}

func (g *callGate) wait(ctx context.Context, _ string) error {
	if tok, ok := g.take(); ok {
		tok.Release() // WithDepartureRenewal: the call's token renews now
		return nil
	}
	return g.l.Wait(ctx)
}

func (g *callGate) acquire(ctx context.Context, _ string) (rxthrottle.Token, error) {
	if tok, ok := g.take(); ok {
		return tok, nil
	}
	return g.l.Acquire(ctx)
}

func (g *callGate) pause(_ string, until time.Time) { g.l.Pause(until) }
