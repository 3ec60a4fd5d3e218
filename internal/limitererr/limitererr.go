// Package limitererr tells a limiter's own failure from a caller's end,
// for the adapters that count the two apart: httpthrottle's Transport
// (TransportStats.Failed) and grpcthrottle's Interceptor (Stats.Failed).
// It is internal to the module tree: grpcthrottle, a module of its own,
// imports it from the root module it requires.
package limitererr

import (
	"context"
	"errors"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// Failed tells whether err, the limiter's error for a caller whose context
// is ctx, is the limiter's own failure: a shared store's outage
// (redisstore's *StoreError under FailClosed), or any other error, but not
// the caller's context ending (or its deadline passed, on the real clock,
// before its timer fired: redisstore returns the context's error then),
// nor a refusal by the limiter's rules (rxthrottle.ErrDeadline,
// ErrQueueFull, ErrTooManyKeys), which the adapters count as Cancelled.
// The context is read, not the error: a store's timeout may wrap
// context.DeadlineExceeded while the caller's context is live.
func Failed(ctx context.Context, err error) bool {
	if errors.Is(err, rxthrottle.ErrDeadline) || errors.Is(err, rxthrottle.ErrQueueFull) ||
		errors.Is(err, rxthrottle.ErrTooManyKeys) || ctx.Err() != nil {
		return false
	}
	dl, ok := ctx.Deadline()
	return !ok || time.Now().Before(dl)
}
