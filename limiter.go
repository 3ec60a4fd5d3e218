package rxthrottle

import (
	"context"
	"time"
)

// Limiter is what every lossless, single-quota limiter in rxthrottle offers,
// with one signature everywhere: the in-memory *Bucket and the Redis-backed
// bucket of package redisstore. Throttle operators and
// httpthrottle.Transport take a Limiter, so swapping memory for Redis is a
// one-line change.
//
// Implementations keep the schedule of SPEC.md: callers are admitted in FIFO
// order (the higher priority first, for a caller's ctx from WithPriority),
// each as early as the quota allows, and never more than the quota. A
// caller whose ctx's deadline comes before it could possibly go is refused
// at once with an error wrapping ErrDeadline and context.DeadlineExceeded.
// Costs (n) are from 1 to the smallest N of the limits; any other n is an
// error wrapping ErrInvalidCost, returned at once.
type Limiter interface {
	// Wait blocks until the caller may go; its token renews W after that
	// moment. If ctx ends first, Wait returns ctx.Err() and the caller
	// consumes no token.
	Wait(ctx context.Context) error
	// WaitN is Wait for a caller that costs n tokens.
	WaitN(ctx context.Context, n int) error
	// Acquire waits like Wait and returns the token held: it renews W after
	// Token.Release (or the limiter's hold timeout), so that work counted at
	// its far end (a request, at the server) stays within the quota.
	Acquire(ctx context.Context) (Token, error)
	// AcquireN is Acquire for n tokens at once.
	AcquireN(ctx context.Context, n int) (Token, error)
	// Allow takes a token and returns true if one is free now and nobody
	// waits; otherwise false, at once. The error reports a limiter that
	// could not decide (a store that failed, a bad ctx).
	Allow(ctx context.Context) (bool, error)
	// AllowN is Allow for n tokens at once.
	AllowN(ctx context.Context, n int) (bool, error)
	// Pause holds back every caller until until (for example a 429's
	// Retry-After). A Pause never shortens an earlier, longer one.
	Pause(until time.Time)
	// SetLimit replaces the limits, effective at once, keeping the history.
	SetLimit(limit Limit, more ...Limit) error
	// Limits returns the limits in force, the first one first.
	Limits() []Limit
	// Stats returns a snapshot of the limiter's counters.
	Stats() Stats
}

// KeyedLimiter is a Limiter with one independent schedule per key (a user,
// an API token, a host): callers only ever wait behind callers of their own
// key. Its methods are the Limiter's with the key after ctx; an empty key
// is an error.
type KeyedLimiter interface {
	// Wait blocks until the caller may go on key's schedule. If ctx ends
	// first, Wait returns ctx.Err() and the caller consumes no token.
	Wait(ctx context.Context, key string) error
	// WaitN is Wait for a caller that costs n tokens of key.
	WaitN(ctx context.Context, key string, n int) error
	// Acquire waits like Wait and returns key's token held until
	// Token.Release.
	Acquire(ctx context.Context, key string) (Token, error)
	// AcquireN is Acquire for n tokens of key at once.
	AcquireN(ctx context.Context, key string, n int) (Token, error)
	// Allow takes a token of key if one is free now and nobody of key
	// waits.
	Allow(ctx context.Context, key string) (bool, error)
	// AllowN is Allow for n tokens of key at once.
	AllowN(ctx context.Context, key string, n int) (bool, error)
	// Pause holds back every caller of key until until.
	Pause(key string, until time.Time)
	// SetLimit replaces the limits of every key, keeping each key's history.
	SetLimit(limit Limit, more ...Limit) error
	// Limits returns the limits every key has, the first one first.
	Limits() []Limit
	// Stats returns a snapshot of the limiter's counters over all keys.
	Stats() Stats
}
