package rxthrottle

import (
	"context"
	"fmt"
	"sync"
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
	if c.taken.Load() || c.returned || c.timedOut {
		return Token{}, nil, false
	}
	c.taken.Store(true)
	return c.job.tok, m.l, true
}

// mapCall is one call of fn and its context: it ends (Done closes) at the
// call's deadline, when the subscription ends, or when fn has returned.
type mapCall struct {
	m   *mapper
	job mapJob

	// Under m.mu.
	returned bool // fn has returned: its result is the item
	timedOut bool // the deadline came first: the item is the timeout's
	// taken says TakeCallToken took the token: settle leaves it alone.
	// Written under m.mu, read by the worker without it once fn returned.
	taken atomic.Bool

	// The context's end, read by fn (and by goroutines fn starts) while
	// the mapper ends it, always under m.mu (end): err is written once,
	// before state says callEnded; done is made by Done, under mu, before
	// state says callDone. So ending a context whose Done fn never asked
	// for (the common case) costs one atomic operation, and Err one load.
	state atomic.Uint32
	mu    sync.Mutex // Done's: it makes done once
	done  chan struct{}
	err   error
}

// The bits of mapCall.state.
const (
	callEnded uint32 = 1 << iota // err is set: the context has ended
	callDone                     // done is made: the end closes it
)

// mapCallBlock is how many calls newCallLocked allocates at once: one
// allocation per so many items rather than one per item. A context fn
// keeps after it returned keeps its block alive (about 2 KiB), each call
// of it holding no item (attempts clears them).
const mapCallBlock = 16

// newCallLocked returns a new call of j, ended already if the
// subscription has. Requires m.mu.
func (m *mapper) newCallLocked(j mapJob) *mapCall {
	if len(m.callBlock) == 0 {
		m.callBlock = make([]mapCall, mapCallBlock)
	}
	c := &m.callBlock[0]
	m.callBlock = m.callBlock[1:]
	c.m, c.job = m, j
	if err := m.ctx.Err(); err != nil {
		c.end(err)
	}
	return c
}

// Deadline returns the call's deadline, or the subscription's if earlier.
func (c *mapCall) Deadline() (time.Time, bool) {
	if d, ok := c.m.ctx.Deadline(); ok && d.Before(c.job.deadline) {
		return d, true
	}
	return c.job.deadline, true
}

// Done returns a channel closed when the call's context ends.
func (c *mapCall) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if !c.state.CompareAndSwap(0, callDone) { // it ended before fn asked
			c.done = closedChan
		}
	}
	return c.done
}

// Err returns nil until the context ends, then why.
func (c *mapCall) Err() error {
	if c.state.Load()&callEnded == 0 {
		return nil
	}
	return c.err
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
	return fmt.Sprintf("rxthrottle.%s(item #%d).WithDeadline(%v)", c.m.op, c.job.seq, c.job.deadline)
}

// end ends the context with err, once. Requires m.mu: no two ends run at
// once, so err is written once, before the state says so.
func (c *mapCall) end(err error) {
	if c.state.Load()&callEnded != 0 {
		return
	}
	c.err = err
	if c.state.Or(callEnded)&callDone != 0 {
		close(c.done)
	}
}
