// Package limitererrtest is the table of limiter errors that the tests of
// every adapter counting limitererr.Failed run through their own limiter
// (httpthrottle's TestTransportStatsFailed, grpcthrottle's TestStatsFailed),
// so that they decide alike. Import it only from _test.go files.
package limitererrtest

import (
	"context"
	"errors"
	"fmt"

	"github.com/rxthrottle/rxthrottle"
)

// Case is one way a limiter's Wait or Acquire ends with an error.
type Case struct {
	Name string
	// Take is the limiter's call: it returns the error, given the
	// caller's context and its cancel (to end the context as the call
	// returns).
	Take func(ctx context.Context, cancel context.CancelFunc) error
	// Failed is whether the adapter counts the caller in Failed (the
	// limiter failed); in Cancelled otherwise.
	Failed bool
}

// Cases are the limiter's failures (a store down, a store's timeout that
// wraps context.DeadlineExceeded while the caller's context is live), its
// refusals by its rules, and a context that ended, with a store's error
// too.
func Cases() []Case {
	down := errors.New("store down")
	storeTimeout := fmt.Errorf("redis: %w", context.DeadlineExceeded)
	return []Case{
		{"store down", func(context.Context, context.CancelFunc) error { return down }, true},
		{"store timed out, context live", func(context.Context, context.CancelFunc) error { return storeTimeout }, true},
		{"deadline refusal", func(context.Context, context.CancelFunc) error {
			return fmt.Errorf("%w: %w", rxthrottle.ErrDeadline, context.DeadlineExceeded)
		}, false},
		{"queue full", func(context.Context, context.CancelFunc) error { return rxthrottle.ErrQueueFull }, false},
		{"too many keys", func(context.Context, context.CancelFunc) error {
			return fmt.Errorf("rxthrottle: %w: key k", rxthrottle.ErrTooManyKeys)
		}, false},
		{"context ended while waiting", func(ctx context.Context, cancel context.CancelFunc) error {
			cancel()
			return ctx.Err()
		}, false},
		{"store failed as the context ended", func(_ context.Context, cancel context.CancelFunc) error {
			cancel()
			return down
		}, false},
	}
}
