package httpthrottle

import (
	"context"
	"errors"
	"net/http"
	"sync"
)

// A timed-out attempt that is kept open (WithMaxKeptOpen) and has a retry
// due (WithMaxAttempts) may still answer while its retry waits for its
// token. The server has that request and answered it, so the Transport
// answers the caller with the late answer and never sends the retry; its
// token, if it came meanwhile, goes back unused (SPEC.md, "Requests on the
// wire"). Once the retry has gone to the base, the earlier answer is read
// and thrown away as any late answer is: the retry's own is the call's.

// lateAnswer is where a kept-open attempt leaves its late answer for the
// retry that waits after it. The methods are no-ops on a nil *lateAnswer
// (no retry is due). It is safe for concurrent use.
type lateAnswer struct {
	ready  context.Context // ends when an answer is offered, or at close
	signal context.CancelFunc

	mu     sync.Mutex
	resp   *http.Response
	drop   func()                  // reads resp's body away and ends its attempt
	end    context.CancelCauseFunc // ends resp's attempt's context
	closed bool                    // the retry went, or the call is over
}

// errLateAnswer ends a retry's wait for its token when the attempt before
// it answered after all.
var errLateAnswer = errors.New("httpthrottle: the timed-out attempt answered before its retry went")

func newLateAnswer() *lateAnswer {
	l := &lateAnswer{}
	l.ready, l.signal = context.WithCancel(context.Background())
	return l
}

// waitContext returns parent, ended too when an answer is offered, and the
// function that lets it go; call that before claim.
func (l *lateAnswer) waitContext(parent context.Context) (context.Context, func()) {
	if l == nil {
		return parent, func() {}
	}
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(l.ready, func() { cancel(errLateAnswer) })
	return ctx, func() { stop(); cancel(nil) }
}

// offer leaves resp, the attempt's late answer, for its retry, and
// reports whether the retry may still take it; if not, the attempt reads
// it away itself. drop reads resp's body away and ends the attempt; end
// ends the attempt's context.
func (l *lateAnswer) offer(resp *http.Response, drop func(), end context.CancelCauseFunc) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.resp, l.drop, l.end = resp, drop, end
	l.signal()
	return true
}

// claim takes the late answer, if one was offered and the retry has not
// gone, for the caller whose context is caller: its body is the caller's
// to read and close, and the attempt ends with it, or when caller ends.
// It returns nil if there is none; after claim, nothing more is offered.
func (l *lateAnswer) claim(caller context.Context) *http.Response {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	resp, end := l.resp, l.end
	if l.closed || resp == nil {
		l.mu.Unlock()
		return nil
	}
	l.closed, l.resp = true, nil
	l.mu.Unlock()
	stop := context.AfterFunc(caller, func() { end(context.Cause(caller)) })
	resp.Body = cancelOnClose(resp.Body, func(error) { stop(); end(nil) })
	return resp
}

// close says the retry has gone or the call is over: an answer offered
// and not claimed is read away, and none is offered after.
func (l *lateAnswer) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	drop := l.drop
	if l.resp == nil {
		drop = nil
	}
	l.closed, l.resp = true, nil
	l.mu.Unlock()
	l.signal()
	if drop != nil {
		go drop()
	}
}

// retriesTimeout reports whether attempt number n of req, if it times out
// (WithAttemptTimeout), is followed by another (WithMaxAttempts): the
// request must be one that can be sent again, as net/http judges it for
// its own re-sends (an idempotent method, or an Idempotency-Key header),
// since the server may have acted on the attempt that timed out.
func (t *Transport) retriesTimeout(req *http.Request, n int, replayable bool) bool {
	if t.cfg.attemptTimeout <= 0 || !replayable || !t.cfg.policy.Retry(n) { // not the learner's attempts: those are for refusals
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
}
