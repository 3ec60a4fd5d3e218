package httpthrottle

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/attempt"
)

// A caller that gives up on an attempt (its context ends, or the attempt
// timeout passes) gets its error at once, but the attempt may still reach
// the server: its token stays held until it can no longer arrive. So the
// attempt runs under a context of its own, and stays open after the
// caller left, until the first of (SPEC.md, "Held tokens"):
//
//   - its late answer's headers: the server has the request, the token is
//     released then, and at most maxDrain of the body is read and thrown
//     away;
//   - the peer closing or resetting the connection, on a direct
//     connection (not with WithStrictInFlightBound, nor through a proxy);
//   - the in-flight bound: then the Transport closes the connection as a
//     reset (SO_LINGER 0, so that nothing still queued in the kernel goes
//     out later) and releases the token.
//
// At most WithMaxKeptOpen attempts are kept open so; beyond that, a
// given-up attempt is closed at once (a reset) and its token held for the
// bound.

// baseResult is what the base's RoundTrip gave (the response, Value, and
// Err), or the panic it raised.
type baseResult = attempt.Outcome[*http.Response]

// errBoundPassed is the cause with which an attempt kept open after its
// caller gave up is closed once the in-flight bound has passed.
var errBoundPassed = errors.New("httpthrottle: the in-flight bound passed with no answer")

// sendOpen is send for a call whose caller can give up: the base runs on a
// goroutine of its own, under a context that is not the caller's (it keeps
// its values), so that giveUp can leave it open.
func (t *Transport) sendOpen(out, timed *http.Request, key string, tok rxthrottle.Token, timer *attemptTimer, late *lateAnswer) (*http.Response, error) {
	actx, acancel := context.WithCancelCause(context.WithoutCancel(timed.Context()))
	w, traced := t.newWire(timed.WithContext(actx), timed, key, tok, timer)
	done := attempt.Go(func() (*http.Response, error) { return t.baseRoundTrip(traced) }, errBasePanicked)
	select {
	case r := <-done:
		if r.Panicked != nil {
			w.finish(errBasePanicked)
			_ = timer.end(nil, errBasePanicked)
			acancel(errBasePanicked)
			panic(r.Panicked)
		}
		if r.Err != nil {
			defer acancel(r.Err)
		} else {
			stop := context.AfterFunc(timed.Context(), func() { acancel(context.Cause(timed.Context())) })
			r.Value.Body = cancelOnClose(r.Value.Body, func(error) { stop(); acancel(nil) })
		}
		return t.settle(out, traced, key, w, timer, r.Value, r.Err)
	case <-timed.Context().Done():
	}
	err := timer.end(nil, context.Cause(timed.Context()))
	if errors.Is(err, ErrAttemptTimeout) {
		t.attemptTimeouts.Add(1)
	}
	o := &openAttempt{t: t, out: out, key: key, w: w, done: done, ctx: actx, cancel: acancel, late: late}
	o.giveUp(err)
	return nil, err
}

// openAttempt is an attempt whose caller gave up, and what ends it.
type openAttempt struct {
	t      *Transport
	out    *http.Request
	key    string
	w      *wire
	done   <-chan baseResult
	ctx    context.Context // the attempt's own
	cancel context.CancelCauseFunc
	conn   net.Conn    // its connection, if the base said
	late   *lateAnswer // where its late answer goes, if a retry is due
}

// giveUp leaves the attempt as its caller gave up with err: one never
// written is stopped and its token given back once the base has returned
// (unless it was written meanwhile); a written one is kept open (keep), or
// beyond WithMaxKeptOpen closed as a reset with its token held for the
// bound.
func (o *openAttempt) giveUp(err error) {
	tok, written, conn := o.w.abandon()
	o.conn = conn
	switch {
	case tok == (rxthrottle.Token{}): // a re-send is waiting or found none
		o.cancel(err)
		go o.drain(func(baseResult) {})
	case !written:
		o.cancel(err)
		go o.drain(func(r baseResult) {
			if r.Err == nil && r.Panicked == nil { // answered after all
				tok.Release()
				return
			}
			if w, _ := o.w.state(); w {
				o.t.afterWrite(tok)
				return
			}
			o.t.unwritten.Add(1)
			tok.Cancel()
		})
	case o.t.keptOpen.Keep(o.t.cfg.policy.MaxKeptOpen):
		o.keep(tok)
	default:
		o.reset(err)
		o.t.afterWrite(tok)
		go o.drain(func(baseResult) {})
	}
}

// keep holds tok until the attempt's late answer, the peer's close of its
// connection, or the bound, whichever comes first.
func (o *openAttempt) keep(tok rxthrottle.Token) {
	var returned atomic.Bool // the base returned: nothing is left to close
	hold := o.t.holds.PastError(o.t.cfg.clock, o.t.cfg.policy.InFlightBound, func() {
		if !returned.Load() {
			o.reset(errBoundPassed)
		}
		tok.Release()
	})
	go func() {
		defer o.t.keptOpen.Done()
		r := <-o.done
		returned.Store(true)
		if r.Err == nil && r.Panicked == nil {
			o.t.listen(r.Value, o.key, o.w.sent) // a late pushback is in place before the token is back
			if hold.End() {
				o.t.lateAnswers.Add(1)
			}
			if r.Value.Request == o.w.req {
				r.Value.Request = o.out
			}
			drop := func() {
				stop := o.t.cfg.clock.AfterFunc(o.t.cfg.policy.InFlightBound, func() { o.cancel(errBoundPassed) })
				discard(r.Value.Body)
				stop.Stop()
				o.cancel(nil)
			}
			if !o.late.offer(r.Value, drop, o.cancel) { // the retry due takes it, or drops it as it goes
				drop()
			}
			return
		}
		if o.w.refusedAfterAbandon() && hold.End() { // unprocessed, through a proxy too
			o.t.refusedStreams.Add(1)
		}
		_, dropped := o.w.state()
		gone := dropped || (context.Cause(o.ctx) == nil && closedByPeer(r.Err))
		if gone && !o.t.strictFor(o.out) && hold.End() {
			o.t.peerCloses.Add(1)
		}
		o.cancel(r.Err)
	}()
}

// drain waits for the base to return, reads and closes its answer's body,
// if it answered, and then calls then.
func (o *openAttempt) drain(then func(baseResult)) {
	r := <-o.done
	if r.Err == nil && r.Panicked == nil {
		discard(r.Value.Body)
	}
	then(r)
	o.cancel(nil)
}

// reset closes the attempt's connection as a reset, if it can (resetConn),
// and ends the attempt's context with cause, which makes the base close
// it.
func (o *openAttempt) reset(cause error) {
	if resetConn(o.conn) {
		o.t.resets.Add(1)
	}
	o.cancel(cause)
}
