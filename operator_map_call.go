package rxthrottle

import "context"

// callKey finds, through a context's Value, the ThrottleMap call a
// function's context belongs to (also once fn has wrapped it).
type callKey struct{}

// TakeCallToken takes over the token ThrottleMap holds for the call of fn
// whose context is ctx (or a context made from it), for a client that
// knows better than fn's result when the request can no longer arrive:
// httpthrottle.ForCall's, which releases the token at the answer, gives it
// back for a request never written, holds it past an error until the
// request cannot arrive, and takes a token of its own from l for each
// further attempt (a re-send of net/http, another request of fn). Once
// taken, ThrottleMap leaves the token alone whatever fn returns (a
// RetryAfter still pauses l and calls fn again, with a token of its own),
// and the taker must end it: Release, Cancel, or a hold past an error.
//
// It returns the token and the Limiter it came from, and ok true; or ok
// false when ctx is not the context of a call of ThrottleMap or
// ThrottleMapWith, or the call's token was already taken, or fn has
// returned.
func TakeCallToken(ctx context.Context) (tok Token, l Limiter, ok bool) {
	c, _ := ctx.Value(callKey{}).(*mapCall)
	if c == nil {
		return Token{}, nil, false
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.taken || c.returned || c.timedOut {
		return Token{}, nil, false
	}
	c.taken = true
	return c.job.tok, m.l, true
}
