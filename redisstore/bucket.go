package redisstore

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
)

// Bucket is rxthrottle's lossless sliding-window bucket with its state in
// Redis, so that every process using the same name shares one quota: at
// most N admissions in any window W across all of them, each caller
// admitted as early as the quota allows, in the order the admissions reach
// Redis (SPEC.md, "Shared (Redis) store").
//
// Each Wait is one round trip: an atomic Lua script computes the caller's
// emission time e from the shared history on Redis's clock, records it, and
// returns it with Redis's now; the caller then waits e-now on the local
// clock (WithClock). Because the wait starts when the reply arrives, a
// caller goes slightly after e, never before. The window holds for
// admission times on Redis's clock; what a remote API sees also includes
// each caller's network delay after the reply.
//
// A Wait whose context ends before its slot gives the slot back if it is
// still the newest reservation. If a later caller reserved after it, the
// slot is kept (a token is wasted, the window is never broken): giving it
// back would mean moving the later callers, whose times are already in
// flight. A context that ends during the round trip itself may also leave a
// slot behind.
//
// Bucket implements rxthrottle.Limiter, so rxthrottle.ThrottleWith and
// httpthrottle take it unchanged. It is safe for concurrent use. Build it
// with NewBucket.
type Bucket struct {
	s     *schedule
	name  string
	keys  []string           // emissions, pause
	local *rxthrottle.Bucket // FallbackLocal only
}

var _ rxthrottle.Limiter = (*Bucket)(nil)

// NewBucket returns the Bucket named name on client (a *redis.Client, a
// *redis.ClusterClient or a *redis.Ring), enforcing limit and every limit
// added with WithLimit at the same time. Every process that uses the same
// name shares the quota, and must use the same limits.
//
// It reads the options WithLimit, WithClock, WithTimeout,
// WithFailurePolicy and OnError. It returns an error for a nil client, an
// empty name or one containing '{' or '}' (the name is the Redis Cluster
// hash tag), a limit that fails Limit.Validate (wrapping
// rxthrottle.ErrInvalidLimit), or a bad option. It does not contact Redis.
func NewBucket(client redis.Scripter, name string, limit rxthrottle.Limit, opts ...Option) (*Bucket, error) {
	if err := checkName("bucket name", name); err != nil {
		return nil, err
	}
	s, cfg, err := newSchedule(client, limit, opts)
	if err != nil {
		return nil, err
	}
	b := &Bucket{s: s, name: name, keys: scheduleKeys(name)}
	if cfg.policy == FallbackLocal {
		lopts := []rxthrottle.Option{rxthrottle.WithClock(cfg.clock)}
		for _, l := range s.limits[1:] {
			lopts = append(lopts, rxthrottle.WithLimit(l))
		}
		if b.local, err = rxthrottle.NewBucket(limit, lopts...); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Wait blocks until the caller may go, and returns nil. If ctx ends first it
// returns ctx.Err(), and gives the slot back when it can (see Bucket). If
// Redis fails, the FailurePolicy decides: by default Wait returns a
// *StoreError wrapping ErrStoreUnavailable and the client's error.
func (b *Bucket) Wait(ctx context.Context) error {
	return b.s.wait(ctx, b.keys, b.name, bucketFallback{b.local})
}

// Allow admits the caller if it may go now, without waiting, and records
// the admission; otherwise it returns false and records nothing. If Redis
// fails, the FailurePolicy decides: by default Allow returns false and a
// *StoreError.
func (b *Bucket) Allow(ctx context.Context) (bool, error) {
	return b.s.allow(ctx, b.keys, b.name, bucketFallback{b.local})
}

// Pause holds back every caller of every process until until: none is
// admitted before it, nobody is dropped. A Pause never shortens a longer
// one; a time in the past does nothing. Redis applies it on its own clock,
// as the delay from now to until on the local clock.
//
// Pause is best effort: it has no error to return, so if Redis fails the
// pause is lost (callers already waiting keep their times), the error goes
// to the OnError hook, and with FallbackLocal the local bucket is paused
// anyway.
func (b *Bucket) Pause(until time.Time) {
	if b.local != nil {
		b.local.Pause(until)
	}
	b.s.pause(b.keys[1], until)
}

// Stats returns this process's counters: admissions, waits, cancellations
// and the callers waiting now. Free is always 0: the free tokens are a
// property of the shared state, not of this process.
func (b *Bucket) Stats() rxthrottle.Stats { return b.s.stats.snapshot() }

// Name returns the bucket's name.
func (b *Bucket) Name() string { return b.name }

// Limits returns the bucket's limits, the first one first.
func (b *Bucket) Limits() []rxthrottle.Limit { return slices.Clone(b.s.limits) }

// Keys returns the Redis keys that hold the bucket's state: the list of
// emission times and the pause-until time. They share one hash tag, so they
// are in one Redis Cluster slot.
func (b *Bucket) Keys() []string { return slices.Clone(b.keys) }
