package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/admission"
)

// ErrQueueFull is wrapped by the error of a caller refused because the
// limiter's queue bound (WithMaxQueue) was reached: it would have waited
// while the bound's number of callers already waited. It consumed nothing.
// Test for it with errors.Is.
var ErrQueueFull = errors.New("queue full")

// ErrDeadline is wrapped by the error of a caller refused at its arrival
// because its context's deadline comes no later than the earliest instant
// it could possibly go (SPEC.md, "Deadlines"): it would only have waited to
// fail. It consumed nothing. The same error also wraps
// context.DeadlineExceeded, so errors.Is finds either.
//
// The earliest instant is a lower bound, decided once, at arrival, from
// the window, the pause and the spacing alone: as if every caller ahead
// gave up and every held token were released at once. A caller behind a
// long queue, or held back by WithConcurrency's cap, can pass it and then
// wait until its deadline ends its wait with the context's error. To learn
// beforehand how long a wait is likely to be, queue included, ask
// Bucket.EstimateWait or Keyed.EstimateWait (an estimate, not a promise).
var ErrDeadline = errors.New("deadline before the earliest departure")

// ErrTokenEnded is wrapped by the error of Token.ReleaseN on a hold that has
// already ended (by Release, Cancel, an earlier ReleaseN or the hold
// timeout): nothing was recorded, so a debt it reported was not counted.
var ErrTokenEnded = errors.New("token already ended")

// queueFullError is the error of a caller refused by the queue bound.
func queueFullError(op string, bound int) error {
	return fmt.Errorf("rxthrottle: %s: %d callers wait already, the bound of WithMaxQueue: %w", op, bound, ErrQueueFull)
}

// deadlineError is the error of a caller refused at arrival by its
// deadline, earliest being how long after its arrival it could have gone
// at best and left how long its context had.
func deadlineError(op string, left, earliest time.Duration) error {
	return fmt.Errorf("rxthrottle: %s: the context's deadline is in %v, and the earliest departure in %v: %w (%w)",
		op, left, earliest, ErrDeadline, context.DeadlineExceeded)
}

// arrivalOf reads what a caller that cannot go at once brings from its
// context, its priority, tenant and deadline (the time left on the real
// clock): read before the limiter's lock is taken, since a context's
// methods are the caller's code.
func arrivalOf(ctx context.Context) admission.Arrival {
	a := admission.Arrival{Who: callerOf(ctx)}
	if d, ok := ctx.Deadline(); ok {
		a.HasDeadline, a.Left = true, time.Until(d)
	}
	return a
}
