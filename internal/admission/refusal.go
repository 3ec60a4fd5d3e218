package admission

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The sentinels every limiter's refusals wrap. The root re-exports them as
// rxthrottle.ErrQueueFull, ErrDeadline and ErrInvalidCost, where they are
// documented; they live here so that the refusals below, which every
// limiter words the same way, can wrap them.
var (
	ErrQueueFull   = errors.New("queue full")
	ErrDeadline    = errors.New("deadline before the earliest departure")
	ErrInvalidCost = errors.New("invalid cost")
)

// Refusals words the errors of one limiter's callers refused by the
// front's rules: the queue bound, the deadline checked at arrival and a
// cost that can never be served. Every limiter's errors read alike and
// wrap the same sentinels; only the names differ.
type Refusals struct {
	// Limiter prefixes every message: "rxthrottle", "redisstore".
	Limiter string
	// Waiting names the callers the queue bound counts: "callers", or
	// "callers of this process" for a limiter shared by several.
	Waiting string
}

// QueueFull is the error of a caller of op refused because bound callers
// wait already (WithMaxQueue).
func (r Refusals) QueueFull(op string, bound int) error {
	return fmt.Errorf("%s: %s: %d %s wait already, the bound of WithMaxQueue: %w", r.Limiter, op, bound, r.Waiting, ErrQueueFull)
}

// Deadline is the error of a caller of op refused at its arrival because
// its context's deadline, left after the arrival, comes no later than the
// earliest instant it could go, earliest after it (SPEC.md, "Deadlines").
// A negative left is not known (a store that decided on its own clock).
// It wraps ErrDeadline and context.DeadlineExceeded.
func (r Refusals) Deadline(op string, left, earliest time.Duration) error {
	if left < 0 {
		return fmt.Errorf("%s: %s: the context's deadline comes before the earliest departure, %v after the arrival: %w (%w)",
			r.Limiter, op, earliest, ErrDeadline, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %s: the context's deadline is in %v, and the earliest departure in %v: %w (%w)",
		r.Limiter, op, left, earliest, ErrDeadline, context.DeadlineExceeded)
}

// Cost returns an error wrapping ErrInvalidCost if a caller of op cannot
// be served n tokens at once by limits whose smallest N is minN, or nil.
func (r Refusals) Cost(op string, n, minN int) error {
	if n >= 1 && n <= minN {
		return nil
	}
	return fmt.Errorf("%s: %s(n=%d): n must be from 1 to the smallest N of the limits, %d: %w", r.Limiter, op, n, minN, ErrInvalidCost)
}
