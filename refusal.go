package rxthrottle

import (
	"context"
	"errors"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/admission"
)

// ErrQueueFull is wrapped by the error of a caller refused because the
// limiter's queue bound (WithMaxQueue) was reached: it would have waited
// while the bound's number of callers already waited. It consumed nothing.
// Test for it with errors.Is.
var ErrQueueFull = admission.ErrQueueFull

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
var ErrDeadline = admission.ErrDeadline

// ErrTokenEnded is wrapped by the error of Token.ReleaseN on a hold that has
// already ended (by Release, Cancel, an earlier ReleaseN or the hold
// timeout): nothing was recorded, so a debt it reported was not counted.
var ErrTokenEnded = errors.New("token already ended")

// refuse words the errors of the callers this module's limiters refuse
// (queue bound, deadline, cost), as every limiter does.
var refuse = admission.Refusals{Limiter: "rxthrottle", Waiting: "callers"}

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
