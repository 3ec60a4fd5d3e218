package httpthrottle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrAttemptTimeout is wrapped by the error of a request whose attempt ran
// past WithAttemptTimeout before its response headers came. The error also
// wraps context.DeadlineExceeded and reports Timeout() true, as net/http's
// own timeouts do.
var ErrAttemptTimeout = errors.New("httpthrottle: attempt timed out")

// attemptTimeoutError is the cause with which an attempt's context ends
// when its timer fires, and the error RoundTrip returns then; base is the
// error the base returned, if it said more than the context's error.
type attemptTimeoutError struct {
	d    time.Duration
	base error
}

func (e *attemptTimeoutError) Error() string {
	msg := fmt.Sprintf("httpthrottle: attempt timed out: no response headers %v after its token (WithAttemptTimeout)", e.d)
	if e.base != nil {
		msg += ": " + e.base.Error()
	}
	return msg
}

func (e *attemptTimeoutError) Unwrap() []error {
	return []error{ErrAttemptTimeout, context.DeadlineExceeded}
}

// Timeout reports true, so that url.Error.Timeout and net.Error callers see a
// timeout.
func (e *attemptTimeoutError) Timeout() bool { return true }

// attemptTimer bounds one attempt: it ends the attempt's context d after
// the attempt's token was granted, on the Transport's clock. A re-send
// stops it while it waits for its own token and restarts it at the grant.
// The methods are no-ops on a nil *attemptTimer (no WithAttemptTimeout).
type attemptTimer struct {
	d      time.Duration
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *clock.Timer
	done  bool // headers came or the attempt failed: never fire again
}

// startAttemptTimer returns out with a context that ends d from now, and
// the timer; with d == 0 it returns out and a nil timer.
func startAttemptTimer(c clock.Clock, d time.Duration, out *http.Request) (*http.Request, *attemptTimer) {
	if d <= 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancelCause(out.Context())
	at := &attemptTimer{d: d, ctx: ctx, cancel: cancel}
	at.timer = c.AfterFunc(d, func() { cancel(&attemptTimeoutError{d: d}) })
	return out.WithContext(ctx), at
}

func (at *attemptTimer) stop() {
	if at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	at.timer.Stop()
}

func (at *attemptTimer) restart() {
	if at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if !at.done {
		at.timer.Reset(at.d)
	}
}

// end stops the timer for good once the attempt is over. With err nil
// (the headers came), the context lives on until resp's body is closed or
// read to its end, so that the caller can read it; otherwise it ends now.
// It returns the error to report: a timeout error when the timer ended the
// attempt (the caller's own context had not ended), err otherwise.
func (at *attemptTimer) end(resp *http.Response, err error) error {
	if at == nil {
		return err
	}
	at.mu.Lock()
	at.done = true
	at.timer.Stop()
	at.mu.Unlock()
	if err == nil {
		resp.Body = cancelOnClose(resp.Body, at.cancel)
		return nil
	}
	cause := context.Cause(at.ctx)
	at.cancel(err)
	var te *attemptTimeoutError
	if errors.As(err, &te) || !errors.As(cause, &te) {
		return err
	}
	out := &attemptTimeoutError{d: te.d}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		out.base = err
	}
	return out
}

// cancelOnClose returns body, calling cancel once it is closed or read to
// its end (or fails). A body that can also be written (the connection of a
// 101 Switching Protocols response) keeps its Write.
func cancelOnClose(body io.ReadCloser, cancel context.CancelCauseFunc) io.ReadCloser {
	b := &cancelBody{ReadCloser: body, cancel: cancel}
	if w, ok := body.(io.Writer); ok {
		return &cancelBodyWriter{cancelBody: b, w: w}
	}
	return b
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.cancel(nil)
	}
	return n, err
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

type cancelBodyWriter struct {
	*cancelBody
	w io.Writer
}

func (b *cancelBodyWriter) Write(p []byte) (int, error) { return b.w.Write(p) }
