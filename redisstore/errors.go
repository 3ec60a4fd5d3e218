package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrStoreUnavailable is wrapped by every error that reports a failed call
// to Redis: a refused connection, a timeout, a server error. Test for it with
// errors.Is; errors.As with a *StoreError gives the key, the operation and
// the underlying error.
var ErrStoreUnavailable = errors.New("redis store unavailable")

// StoreError reports a call to Redis that failed. It wraps both
// ErrStoreUnavailable and the error go-redis returned, so errors.Is works
// for either (for example context.DeadlineExceeded for a timeout).
type StoreError struct {
	// Op is what the limiter was doing: "admit", "release", "pause" or
	// "guard hit".
	Op string
	// Key is the Redis key of the state the call was about.
	Key string
	// Err is the error from go-redis (or a description of a malformed
	// reply).
	Err error
}

// Error says which key, which operation and what went wrong.
func (e *StoreError) Error() string {
	return fmt.Sprintf("redisstore: %s on key %q: %v: %v", e.Op, e.Key, ErrStoreUnavailable, e.Err)
}

// Unwrap returns ErrStoreUnavailable and the underlying error.
func (e *StoreError) Unwrap() []error { return []error{ErrStoreUnavailable, e.Err} }

// noAnswerError is the error of a call that Redis did not answer within
// the call timeout (WithTimeout); it wraps context.DeadlineExceeded.
type noAnswerError struct{ timeout time.Duration }

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("no answer from Redis within the call timeout %v", e.timeout)
}

func (e *noAnswerError) Unwrap() error { return context.DeadlineExceeded }
