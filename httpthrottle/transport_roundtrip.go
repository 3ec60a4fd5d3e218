package httpthrottle

import (
	"context"
	"errors"
	"net/http"

	"github.com/rxthrottle/rxthrottle"
)

// RoundTrip waits for a token, sends req through the base RoundTripper,
// pauses the limiter if the response says so, and, with WithMaxAttempts,
// retries a 429 and an attempt that timed out (WithAttemptTimeout). Like
// every RoundTripper it closes req.Body, also on error, and does not
// modify req.
//
// The body is closed in two places: by call.take when an attempt does
// not go (the caller's body on the first attempt, before or after its
// wait; a retry's, made by GetBody), and by baseRoundTrip when the base
// fails without closing it. Every other body went to the base, which
// closes it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := &call{t: t, req: req}
	c.replayable = req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	defer func() { c.late.close() }()
	return c.run()
}

// key returns the key req counts against, or why it cannot be sent.
func (t *Transport) key(req *http.Request) (string, error) {
	if t.gate == nil {
		return "", errZeroTransport
	}
	key, err := t.gate.key(req)
	if err != nil {
		return "", wrapError(err, "no key for %s %s", req.Method, redactURL(req.URL))
	}
	return key, nil
}

// call is one RoundTrip's attempts.
type call struct {
	t          *Transport
	req        *http.Request
	key        string // found by the first attempt's take
	replayable bool

	refused *http.Response // the last refusal, returned if its retry is over the budget
	lastErr error          // the last attempt's timeout, returned likewise
	late    *lateAnswer    // the timed-out attempt's late answer, while its retry waits
}

func (c *call) run() (*http.Response, error) {
	t := c.t
	for n := 1; ; n++ {
		g, err := c.take(n)
		if g.answer != nil { // the attempt before answered before this one went
			if !t.retryable(g.answer) {
				t.lateAnswered.Add(1)
				return g.answer, nil
			}
			c.refused, c.lastErr = drained(g.answer), nil // a late refusal: this attempt is its retry
			if g.cut {
				n-- // the wait ended for the answer: wait again
				continue
			}
		}
		c.late.close()                     // the retry goes: an earlier answer is no longer the call's
		if errors.Is(err, errOverBudget) { // WithRetryBudget: the refusal is the answer
			t.overBudget.Add(1)
			return c.refused, c.lastErr
		}
		if err != nil {
			return nil, err
		}
		if n == 1 {
			t.budget.First(t.cfg.clock.Now())
		} else {
			t.retries.Add(1)
		}
		var late *lateAnswer
		if t.retriesTimeout(c.req, n, c.replayable) {
			late = newLateAnswer()
		}
		resp, err := t.send(g.out, c.key, g.tok, late)
		if err != nil {
			if late == nil || !errors.Is(err, ErrAttemptTimeout) || c.req.Context().Err() != nil {
				late.close()
				return nil, err
			}
			c.late, c.refused, c.lastErr = late, nil, err // timed out: try again
			continue
		}
		late.close()
		if !t.retryable(resp) || !t.mayRetry(n) || !c.replayable {
			return resp, nil
		}
		c.refused, c.lastErr = drained(resp), nil
	}
}

// taken is what call.take got ready: the attempt and its token, or the
// answer of the timed-out attempt before it.
type taken struct {
	out    *http.Request // to send; on an error, the body not sent (or nil)
	tok    rxthrottle.Token
	answer *http.Response // the attempt before's late answer, if it came first
	cut    bool           // the wait for the token ended for answer: no token
	unsent bool           // answer is the call's: out does not go
}

// take gets attempt n ready (ready), and closes the body the attempt
// would have sent if it does not go: the caller's on the first attempt,
// the one GetBody made on a retry (none, if the attempt failed before
// making it). It is the one place a body never handed to the base is
// closed.
func (c *call) take(n int) (taken, error) {
	g, err := c.ready(n)
	if err != nil || g.unsent {
		closeBody(g.out)
		g.out = nil
	}
	return g, err
}

// ready is Transport.take for attempt n, the first of which finds the
// call's key, and whose wait for its token also ends when the timed-out
// attempt before it answers (c.late). Then it returns that answer too; if
// the answer is not one to retry and the token had come, the token goes
// back unused and the attempt does not go (unsent).
func (c *call) ready(n int) (taken, error) {
	if n == 1 {
		key, err := c.t.key(c.req)
		if err != nil {
			return taken{out: c.req}, err
		}
		c.key = key
	}
	ctx, stop := c.late.waitContext(c.req.Context())
	out, tok, err := c.t.take(c.req, ctx, c.key, n)
	stop()
	g := taken{out: out, tok: tok, answer: c.late.claim(c.req.Context())}
	if g.answer == nil {
		return g, err
	}
	c.late = nil // claimed: its wait is over
	if g.answer.Request == nil {
		g.answer.Request = c.req
	}
	g.cut = err != nil && c.req.Context().Err() == nil && errors.Is(context.Cause(ctx), errLateAnswer)
	if err == nil && !c.t.retryable(g.answer) {
		tok.Cancel() // not sent: the token goes back unused
		g.tok, g.unsent = rxthrottle.Token{}, true
	}
	return g, err
}
