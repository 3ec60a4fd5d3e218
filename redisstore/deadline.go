package redisstore

import (
	"context"
	"fmt"
	"time"
)

// refuseDeadlines: a caller whose deadline comes before the earliest
// instant it could go is refused at its arrival (SPEC.md, "Deadlines");
// until the shared limiter suite expects it, such a caller waits,
// unreserved, until its context ends.
const refuseDeadlines = false

// errDeadline stands for rxthrottle.ErrDeadline until the root package
// has it.
var errDeadline = fmt.Errorf("deadline before the earliest departure")

// deadlineError is the error of a caller refused at its arrival because
// its context's deadline is no later than the earliest instant it could
// possibly go (SPEC.md, "Deadlines"): it wraps both ErrDeadline and
// context.DeadlineExceeded.
type deadlineError struct {
	op    string
	after time.Duration // from the arrival to that earliest instant
}

func (e *deadlineError) Error() string {
	return fmt.Sprintf("redisstore: %s: %v: the context's deadline comes before the earliest instant the caller could go, %v after its arrival", e.op, errDeadline, e.after)
}

func (e *deadlineError) Unwrap() []error { return []error{errDeadline, context.DeadlineExceeded} }

// noAnswerError is the error of a call that Redis did not answer within
// the call timeout (WithTimeout); it wraps context.DeadlineExceeded.
type noAnswerError struct{ timeout time.Duration }

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("no answer from Redis within the call timeout %v", e.timeout)
}

func (e *noAnswerError) Unwrap() error { return context.DeadlineExceeded }
