package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// What fn's result says about its request, for ThrottleMap: whether the
// request can still arrive (SPEC.md, "Held tokens": an error is a
// completion only when the request can no longer arrive), and whether the
// server pushed back.

// DefaultInFlightBound is attempt.DefaultInFlightBound, the in-flight
// bound of every adapter: how long ThrottleMap holds the token of a call
// that returned an error saying neither NotSent nor Answered, unless
// WithInFlightBound says otherwise.
const DefaultInFlightBound = attempt.DefaultInFlightBound

// DefaultMaxAttempts is attempt.DefaultMaxAttempts, the number of attempts
// of every adapter: how many times ThrottleMap calls fn for one item that
// fn answers with RetryAfter, unless WithMaxAttempts says otherwise.
const DefaultMaxAttempts = attempt.DefaultMaxAttempts

// ErrNotSent is what an error of fn wraps (see NotSent) to say that its
// request was never sent: ThrottleMap gives the call's token back at once,
// as if the item had never departed.
var ErrNotSent = errors.New("the request was never sent")

// ErrAnswered is what an error of fn wraps (see Answered) to say that its
// request was answered (a 4xx or 5xx the server sent): the error is a
// completion, and ThrottleMap releases the call's token at once.
var ErrAnswered = errors.New("the request was answered")

// NotSent returns err marked as the error of a request that was never
// sent (its connection was never made, it was refused before writing):
// returned by a ThrottleMap function, its token is given back at once and
// consumes nothing. The message is err's; errors.Is finds err and
// ErrNotSent. Marking a request that may have been written makes the
// server see more than the quota.
func NotSent(err error) error { return &markedError{err: err, mark: ErrNotSent} }

// Answered returns err marked as the error of a request the server
// answered: returned by a ThrottleMap function, its token is released at
// once, as for a result. The message is err's; errors.Is finds err and
// ErrAnswered.
func Answered(err error) error { return &markedError{err: err, mark: ErrAnswered} }

type markedError struct {
	err  error
	mark error
}

func (e *markedError) Error() string {
	if e.err == nil {
		return e.mark.Error()
	}
	return e.err.Error()
}

func (e *markedError) Unwrap() []error { return []error{e.err, e.mark} }

// PushbackError is the error a ThrottleMap function returns, through
// RetryAfter, when the server refused its request and asked to wait: a
// 429 Too Many Requests or a 503 with Retry-After, a RESOURCE_EXHAUSTED
// with retry info. ThrottleMap then releases the call's token (the server
// answered), pauses its Limiter until After from now (Limiter.Pause, so no
// call of any item starts before), and calls fn again for the item, in its
// place: the retry waits for a token of its own with a priority one above
// the subscription's (WithPriority), so that it goes before the items
// behind it (and, on a shared Limiter, before other callers of the
// subscription's priority), and the outputs keep their order. After WithMaxAttempts calls in all
// (DefaultMaxAttempts), the item's output is an error item wrapping the
// last PushbackError.
type PushbackError struct {
	// After is how long the server asked to wait; a negative After counts
	// as 0, and one above attempt.DefaultMaxPause (ten minutes), every
	// adapter's cap, as the cap: a bogus delay must not stall the stream
	// for days.
	After time.Duration
	// Err is the refusal, as fn saw it.
	Err error
}

// RetryAfter returns the *PushbackError for a request refused by err and
// to be tried again after d.
func RetryAfter(d time.Duration, err error) error { return &PushbackError{After: d, Err: err} }

// Error says what refused and how long to wait.
func (e *PushbackError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("refused, retry after %v", e.After)
	}
	return fmt.Sprintf("%v (retry after %v)", e.Err, e.After)
}

// Unwrap returns Err.
func (e *PushbackError) Unwrap() error { return e.Err }

// pause returns how long to pause for e, within [0, most].
func (e *PushbackError) pause(most time.Duration) time.Duration { return min(max(e.After, 0), most) }

// refusedError is the error item of an item fn refused attempts times.
type refusedError struct {
	op       string
	item     int
	attempts int
	last     *PushbackError
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("rxthrottle: %s: item #%d: refused %d times: %v", e.op, e.item, e.attempts, e.last)
}

func (e *refusedError) Unwrap() error { return e.last }

// overBudget is the output of item j's call refused attempts times whose
// retry the retry budget had no room for: the last refusal, as after the
// last attempt.
func overBudget(op string, seq, attempts int, refusal rxgo.Item) rxgo.Item {
	var pe *PushbackError
	if !errors.As(refusal.E, &pe) {
		return refusal
	}
	return rxgo.Error(&refusedError{op: op, item: seq, attempts: attempts, last: pe})
}

// settle ends tok, the token of attempt number attempt of item seq, whose
// result is item, as the result says: released at once for a value, an
// Answered error or a pushback; given back for NotSent; held for the
// in-flight bound for any other error (the request may still arrive). It
// returns the item to emit, and the pause to wait before another attempt,
// if fn pushed back and attempts remain.
func (m *mapper) settle(seq int, tok Token, item rxgo.Item, attempt int) (out rxgo.Item, retry bool) {
	release := func() {
		if err := m.endHold(seq, tok, true); err != nil && item.E == nil {
			item = rxgo.Error(err)
		}
	}
	if item.E == nil {
		release()
		return item, false
	}
	switch pe := pushbackOf(item.E); {
	case pe != nil:
		release()
		m.l.Pause(m.clock.Now().Add(pe.pause(m.cfg.policy.MaxPause)))
		if m.cfg.policy.Retry(attempt) && m.ctx.Err() == nil {
			return item, true
		}
		item = rxgo.Error(&refusedError{op: m.op, item: seq, attempts: attempt, last: pe})
	case errors.Is(item.E, ErrNotSent):
		_ = m.endHold(seq, tok, false)
	case errors.Is(item.E, ErrAnswered):
		release()
	case tok == Token{}: // taken (TakeCallToken): nothing to hold
	default: // it may have been sent: it can still arrive
		m.holds.PastError(m.clock, m.cfg.policy.InFlightBound, func() { _ = m.endHold(seq, tok, true) })
	}
	return item, false
}

// pushbackOf returns the *PushbackError in err's chain, or nil. It is
// apart from settle so that the variable errors.As writes, which escapes,
// is allocated only for an error item, not for every item.
func pushbackOf(err error) *PushbackError {
	var pe *PushbackError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

// retryContext is the context a retry waits for its token with: one
// priority above ctx's, so that it goes before the items behind it.
func retryContext(ctx context.Context) context.Context {
	p := PriorityFrom(ctx)
	if p == math.MaxInt {
		return ctx
	}
	return WithPriority(ctx, p+1)
}
