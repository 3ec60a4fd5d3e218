package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// deadlineError is the error of a caller refused at its arrival because
// its context's deadline is no later than the earliest instant it could
// possibly go (SPEC.md, "Deadlines"), as the script computed it: it wraps
// both rxthrottle.ErrDeadline and context.DeadlineExceeded.
type deadlineError struct {
	op       string
	earliest time.Duration // from the arrival (Redis's now) to that instant
}

func (e *deadlineError) Error() string {
	return fmt.Sprintf("redisstore: %s: the context's deadline comes before the earliest departure, %v after the arrival: %v (%v)", e.op, e.earliest, rxthrottle.ErrDeadline, context.DeadlineExceeded)
}

func (e *deadlineError) Unwrap() []error {
	return []error{rxthrottle.ErrDeadline, context.DeadlineExceeded}
}

// noAnswerError is the error of a call that Redis did not answer within
// the call timeout (WithTimeout); it wraps context.DeadlineExceeded.
type noAnswerError struct{ timeout time.Duration }

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("no answer from Redis within the call timeout %v", e.timeout)
}

func (e *noAnswerError) Unwrap() error { return context.DeadlineExceeded }
