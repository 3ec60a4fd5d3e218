package rxthrottle

import (
	"context"
	"time"
)

// Limiter is what every lossless, single-quota limiter in rxthrottle offers:
// the in-memory *Bucket and the Redis-backed bucket of package redisstore.
// Throttle operators and httpthrottle.Transport take a Limiter, so they work
// unchanged with either.
//
// Implementations keep the schedule of SPEC.md: callers are admitted in FIFO
// order, each as early as the quota allows, and never more than the quota.
type Limiter interface {
	// Wait blocks until the caller may go. If ctx ends first, Wait returns
	// ctx.Err() and the caller consumes no token.
	Wait(ctx context.Context) error
	// Pause holds back every caller until until (for example a 429's
	// Retry-After). A Pause never shortens an earlier, longer one.
	Pause(until time.Time)
	// Stats returns a snapshot of the limiter's counters.
	Stats() Stats
}

// KeyedLimiter is a Limiter with one independent schedule per key (a user,
// an API token, a host): callers only ever wait behind callers of their own
// key.
type KeyedLimiter interface {
	// Wait blocks until the caller may go on key's schedule. If ctx ends
	// first, Wait returns ctx.Err() and the caller consumes no token.
	Wait(ctx context.Context, key string) error
	// Pause holds back every caller of key until until.
	Pause(key string, until time.Time)
	// Stats returns a snapshot of the limiter's counters over all keys.
	Stats() Stats
}
