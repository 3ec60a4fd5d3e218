package rxthrottle

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

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
	if c.is(callTaken | callReturned | callTimedOut) {
		return Token{}, nil, false
	}
	c.state.Or(callTaken)
	return c.job.tok, m.l, true // c.job is set while fn runs
}

// mapCall is one call of fn and its context: it ends (Done closes) at the
// call's deadline, when the subscription ends, or when fn has returned. A
// context fn keeps after it returned keeps its call alive, so a call is
// never reused; it is kept small (48 B) instead, since one is allocated
// an item: what only a running call needs (its item's slot and token) is
// in the job, its goroutine's, which the call points to while it runs.
type mapCall struct {
	m        *mapper
	job      *mapJob // the running call's, under m.mu; nil once fn returned
	seq      int     // the item's, for String
	deadline int64   // as an offset from m.epoch

	// The call's flags, written under m.mu: the context's end, read by fn
	// (and by goroutines fn starts) without it (Err, and Done once made),
	// why it ended, and the mapper's own (callTaken, read without m.mu by
	// the worker once fn returned; callReturned, callTimedOut). done is
	// made by Done, under m.mu, before state says callDone. So ending a
	// context whose Done fn never asked for (the common case) costs one
	// atomic operation, and Err one load.
	state atomic.Uint32
	done  chan struct{}
}

// The bits of mapCall.state.
const (
	callEnded        uint32 = 1 << iota // the context has ended: context.Canceled unless another bit says
	callDone                            // done is made: the end closes it
	callExpired                         // ended at its deadline: context.DeadlineExceeded
	callSubscription                    // ended with the subscription: m.ctx.Err()
	callTaken                           // TakeCallToken took the token: settle leaves it alone
	callReturned                        // fn has returned: its result is the item
	callTimedOut                        // the deadline came first: the item is the timeout's
)

// is reports whether any of the bits is set.
func (c *mapCall) is(bits uint32) bool { return c.state.Load()&bits != 0 }

// mapCallBlock is how many calls newCallLocked allocates at once: one
// allocation per so many items rather than one per item. A context fn
// keeps after it returned keeps its block alive (768 B), each call of it
// holding no item (attempts clears them).
const mapCallBlock = 16

// newCallLocked returns a new call of the job j points to, ended already
// if the subscription has. Requires m.mu.
func (m *mapper) newCallLocked(j *mapJob) *mapCall {
	if len(m.callBlock) == 0 {
		m.callBlock = make([]mapCall, mapCallBlock)
	}
	c := &m.callBlock[0]
	m.callBlock = m.callBlock[1:]
	c.m, c.job, c.seq, c.deadline = m, j, j.seq, j.deadline
	if m.ctx.Err() != nil {
		c.end(callSubscription)
	}
	return c
}

// Deadline returns the call's deadline, or the subscription's if earlier.
func (c *mapCall) Deadline() (time.Time, bool) {
	own := c.m.timeOf(c.deadline)
	if d, ok := c.m.ctx.Deadline(); ok && d.Before(own) {
		return d, true
	}
	return own, true
}

// Done returns a channel closed when the call's context ends.
func (c *mapCall) Done() <-chan struct{} {
	if c.is(callDone) { // made: c.done was written before
		return c.done
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if !c.is(callDone) { // end, under m.mu too, cannot run meanwhile
		c.done = closedChan // it ended before fn asked
		if !c.is(callEnded) {
			c.done = make(chan struct{})
		}
		c.state.Or(callDone)
	}
	return c.done
}

// Err returns nil until the context ends, then why.
func (c *mapCall) Err() error {
	switch s := c.state.Load(); {
	case s&callEnded == 0:
		return nil
	case s&callExpired != 0:
		return context.DeadlineExceeded
	case s&callSubscription != 0:
		return c.m.ctx.Err() // which, once non-nil, stays the same
	}
	return context.Canceled
}

// Value returns the subscription context's value for key, or c itself
// for callKey (TakeCallToken).
func (c *mapCall) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.m.ctx.Value(key)
}

func (c *mapCall) String() string {
	return fmt.Sprintf("rxthrottle.%s(item #%d).WithDeadline(%v)", c.m.op, c.seq, c.m.timeOf(c.deadline))
}

// end ends the context, once, for the reason why (0 for context.Canceled,
// callExpired or callSubscription). Requires m.mu: no two ends run at once.
func (c *mapCall) end(why uint32) {
	if c.state.Load()&callEnded != 0 {
		return
	}
	if c.state.Or(callEnded|why)&callDone != 0 {
		close(c.done)
	}
}
