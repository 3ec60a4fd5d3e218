package httpthrottle

import (
	"context"
	"errors"
	"net/http"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/limitererr"
)

// take gets attempt number n of req ready to go: its token, and for
// a retry a fresh body from GetBody. An attempt that cannot go takes no
// token: a held token is given back (Token.Cancel); with departure renewal,
// where Wait's token cannot be given back, the body is made before the
// wait. When the attempt cannot go, take returns with its error the
// request whose body it would have sent, for call.take to close: the
// caller's on the first attempt, the fresh one on a retry once made (the
// caller's went with the first attempt and the base closed it), nil if
// none. A retry counts against the retry budget as its token comes
// (before the wait, with departure renewal): over it, take fails with
// errOverBudget. The wait for the token ends with ctx, req's context or
// one that ends sooner.
func (t *Transport) take(req *http.Request, ctx context.Context, key string, n int) (*http.Request, rxthrottle.Token, error) {
	var out *http.Request
	if n == 1 {
		out = req
	}
	var err error
	waiter := req
	if ctx != req.Context() {
		waiter = req.WithContext(ctx)
	}
	if t.cfg.departure {
		if n > 1 {
			if !t.budget.Retry(t.cfg.clock.Now()) {
				return nil, rxthrottle.Token{}, errOverBudget
			}
			if out, err = t.rewind(req); err != nil {
				return nil, rxthrottle.Token{}, err
			}
		}
		if _, err := t.wait(waiter, key, false); err != nil {
			return out, rxthrottle.Token{}, err
		}
		return out, rxthrottle.Token{}, t.stillWanted(out, rxthrottle.Token{})
	}
	tok, err := t.wait(waiter, key, true)
	if err != nil {
		return out, rxthrottle.Token{}, err
	}
	if n > 1 {
		if !t.budget.Retry(t.cfg.clock.Now()) {
			tok.Cancel() // not sent: the token goes back unused
			return nil, rxthrottle.Token{}, errOverBudget
		}
		if out, err = t.rewind(req); err != nil {
			tok.Cancel() // nothing is sent: the token goes back unused
			return nil, rxthrottle.Token{}, err
		}
	}
	return out, tok, t.stillWanted(out, tok)
}

// errOverBudget stops a retry the retry budget has no room for.
var errOverBudget = errors.New("httpthrottle: the retry budget is spent")

// stillWanted checks, as the token comes, that out's context has not ended
// meanwhile: then the request is not sent and its token goes back unused.
func (t *Transport) stillWanted(out *http.Request, tok rxthrottle.Token) error {
	err := out.Context().Err()
	if err != nil {
		tok.Cancel()
		t.cancelled.Add(1)
	}
	return err
}

// send hands out to the base with its token held and ends the token as
// the wire says (see wire): released once the response headers are here,
// given back if the request was never written, held past the error
// otherwise (also if the base panics) until the request can no longer
// arrive. Each re-send the base makes by itself gets a token of its own.
// The pause, if the answer asks for one, is in place before the token is
// back. With WithAttemptTimeout, the attempt's clock starts now, at its
// token's grant. A call whose caller can give up (an attempt timeout, or a
// context that can end) goes through sendOpen; if it times out with a
// retry due, its late answer goes to late.
func (t *Transport) send(out *http.Request, key string, tok rxthrottle.Token, late *lateAnswer) (*http.Response, error) {
	t.sent.Add(1)
	timed, timer := startAttemptTimer(t.cfg.clock, t.cfg.attemptTimeout, out)
	if !t.cfg.departure && timed.Context().Done() != nil {
		return t.sendOpen(out, timed, key, tok, timer, late)
	}
	w, traced := t.newWire(timed, timed, key, tok, timer)
	finished := false
	defer func() {
		if !finished { // the base panicked: its request may have gone
			w.finish(errBasePanicked)
			_ = timer.end(nil, errBasePanicked)
		}
	}()
	resp, err := t.baseRoundTrip(traced)
	finished = true
	return t.settle(out, traced, key, w, timer, resp, err)
}

// settle ends a call whose base returned while its caller waited: the
// error, with the token ended as the wire says, or the response, its
// pushback in place before its token is released.
func (t *Transport) settle(out, traced *http.Request, key string, w *wire, timer *attemptTimer, resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		if failed := w.finish(err); failed != nil {
			err = failed
		}
		err = timer.end(nil, err)
		if errors.Is(err, ErrAttemptTimeout) {
			t.attemptTimeouts.Add(1)
		}
		return nil, err
	}
	_ = timer.end(resp, nil)
	if resp.Request == traced {
		resp.Request = out
	}
	t.listen(resp, key, w.sent)
	w.finish(nil)
	return resp, nil
}

var errBasePanicked = errors.New("httpthrottle: the base RoundTripper panicked")

// baseRoundTrip hands req to the base. The base must close req's body,
// also on error; not every base does, so after an error or a panic the
// body is closed here too, whether the caller still waits or gave up (a
// second Close is harmless for the bodies net/http makes: NopCloser,
// files, pipes).
func (t *Transport) baseRoundTrip(req *http.Request) (resp *http.Response, err error) {
	answered := false
	defer func() {
		if !answered {
			closeBody(req)
		}
	}()
	resp, err = t.cfg.base.RoundTrip(req)
	answered = err == nil
	return resp, err
}

// afterWrite ends the token of an attempt that failed after its request
// may have been written: the request can still reach the server, so the
// token is held until the in-flight bound has passed (WithInFlightBound),
// then released: it renews one window after that. With a bound of 0 it is
// released at once, and with departure renewal there is nothing to hold.
func (t *Transport) afterWrite(tok rxthrottle.Token) {
	release := tok.Release
	if t.cfg.departure {
		release = nil
	}
	t.holds.PastError(t.cfg.clock, t.cfg.policy.InFlightBound, release)
}

// peerClosed ends the token of an attempt whose connection the peer closed
// or reset after its request was written: on a direct connection nothing
// of it can arrive afterwards, so the token is released now, as at an
// answer. Behind a proxy (WithStrictInFlightBound, or a base whose Proxy
// names one for req) it is held past the error like any other.
func (t *Transport) peerClosed(req *http.Request, tok rxthrottle.Token) {
	if t.cfg.departure || t.strictFor(req) {
		t.afterWrite(tok)
		return
	}
	t.holds.PastError(t.cfg.clock, 0, tok.Release)
	t.peerCloses.Add(1)
}

// refusedStream ends the token of an HTTP/2 attempt the server refused
// unprocessed (net/http sends it again): it never reached the server's
// application, nor, through a proxy, went upstream, so the token is
// released now, as at an answer.
func (t *Transport) refusedStream(tok rxthrottle.Token) {
	t.refusedStreams.Add(1)
	if !t.cfg.departure {
		tok.Release()
	}
}

// wait takes a token for req: held (Acquire) when hold is true, renewing
// at departure (Wait) otherwise; or it returns the context's error, or the
// limiter's wrapped, counted in Failed if the limiter failed (limitererr.Failed)
// and in Cancelled otherwise. A context that has already ended is refused before the
// limiter is asked, so that it cannot take a free token.
func (t *Transport) wait(req *http.Request, key string, hold bool) (rxthrottle.Token, error) {
	var tok rxthrottle.Token
	err := req.Context().Err()
	if err == nil {
		ctx := t.limiterContext(req)
		if hold {
			tok, err = t.gate.acquire(ctx, key)
		} else {
			err = t.gate.wait(ctx, key)
		}
	}
	if err == nil {
		return tok, nil
	}
	if limitererr.Failed(req.Context(), err) {
		t.failed.Add(1)
	} else {
		t.cancelled.Add(1)
	}
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
