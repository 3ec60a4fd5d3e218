package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/reactivex/rxgo/v2"
)

// ThrottleMap's deadline for fn: a call's context ends at its token's hold
// timeout, and a call still running then is abandoned in its place (its
// worker detached), so that one hung call cannot stall the stream.

// ErrHoldTimeout is what the error item of a ThrottleMap call that outlived
// its hold timeout wraps (errors.Is finds it, and context.DeadlineExceeded).
var ErrHoldTimeout = errors.New("the call outlived its hold timeout")

// holdTimeoutError is the error item of item whose call outlived its hold
// timeout d. err is fn's own error when fn returned one after its context
// ended (nil when fn had not returned): Unwrap gives it, but the message
// does not depend on it, so that it reads the same whichever came first
// at the deadline, fn's return or the operator's timer.
type holdTimeoutError struct {
	op   string
	item int
	d    time.Duration
	err  error
}

func (e *holdTimeoutError) Error() string {
	return fmt.Sprintf("rxthrottle: %s: item #%d: the call outlived its hold timeout (%v)", e.op, e.item, e.d)
}

func (e *holdTimeoutError) Is(target error) bool {
	return target == ErrHoldTimeout || target == context.DeadlineExceeded
}

func (e *holdTimeoutError) Unwrap() error { return e.err }

// holdTimeoutOf returns the clock and the hold timeout of l: a Bucket's
// own, or, for another Limiter, the real clock and the hold timeout it
// reports with a HoldTimeout method, else DefaultHoldTimeout (the default
// of every limiter in this module).
func holdTimeoutOf(l Limiter) (clock.Clock, time.Duration) {
	if b, ok := l.(*Bucket); ok {
		return b.hooks.clock, b.hooks.holdTimeout
	}
	if h, ok := l.(interface{ HoldTimeout() time.Duration }); ok {
		if d := h.HoldTimeout(); d > 0 {
			return clock.New(), d
		}
	}
	return clock.New(), DefaultHoldTimeout
}

// callCtx returns fn's context for j, which ends at j's deadline, and arms
// the expiry of the call at that deadline. stop disarms it and reports
// whether it did so before the expiry began.
func (m *mapper) callCtx(j mapJob) (ctx context.Context, stop func() bool, cancel context.CancelFunc) {
	ctx, cancel = m.clock.WithDeadline(m.ctx, j.deadline)
	stop = context.AfterFunc(ctx, func() { m.expire(j, ctx, false) })
	return ctx, stop, cancel
}

// expire runs when j's call context has ended and fn has not returned (as
// far as stop could tell). If the deadline has passed, the call is
// abandoned: its slot gets the timeout's error item in its place, the
// worker inside fn is detached (it will discard what fn returns, and the
// subscription no longer waits for it), and the outputs behind go on. If
// the subscription ended first, fn is expected to return now; should it
// not, the expiry comes back at the deadline. atDeadline says the
// deadline has passed whatever ctx says.
func (m *mapper) expire(j mapJob, ctx context.Context, atDeadline bool) {
	m.mu.Lock()
	s := j.slot
	if s.returned || s.timedOut {
		m.mu.Unlock()
		return
	}
	if !atDeadline && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		m.mu.Unlock()
		m.clock.AfterFunc(m.clock.Until(j.deadline), func() { m.expire(j, ctx, true) })
		return
	}
	s.timedOut, s.pinned = true, true
	s.item, s.done = rxgo.Error(&holdTimeoutError{op: m.op, item: j.seq, d: m.holdTimeout}), true
	m.advanceLocked()
	// This goroutine now holds the detached worker's place in m.wg: the
	// subscription waits for it while it may send downstream.
	m.emitLocked(false)
	m.mu.Unlock()
	m.wg.Done()
}

// deadlineItem turns fn's error, returned once its context ended at the
// deadline (not by the subscription's end), into the timeout's error item.
func (m *mapper) deadlineItem(j mapJob, ctx context.Context, item rxgo.Item) rxgo.Item {
	if item.Error() && m.ctx.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return rxgo.Error(&holdTimeoutError{op: m.op, item: j.seq, d: m.holdTimeout, err: item.E})
	}
	return item
}
