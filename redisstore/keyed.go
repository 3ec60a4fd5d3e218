package redisstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
)

// errEmptyKey is returned by Keyed's Wait and Allow for an empty key.
var errEmptyKey = errors.New("redisstore: empty key")

// Keyed is the Redis-backed counterpart of rxthrottle.Keyed: one
// independent shared schedule per key (a user, an API token, a host), each
// with the limits given to NewKeyed, kept in Redis so that every process
// using the same prefix shares each key's quota. Each key's state is the
// state of a Bucket (see there for the model, the cost of cancellation and
// the failure policy) under its own Redis keys, which expire when the key is
// idle: Redis, not this process, holds the keys, so there is no bound on
// their number to set here.
//
// Keyed implements rxthrottle.KeyedLimiter. It is safe for concurrent use.
// Build it with NewKeyed.
type Keyed struct {
	s      *schedule
	prefix string
	local  *rxthrottle.Keyed // FallbackLocal only
}

var _ rxthrottle.KeyedLimiter = (*Keyed)(nil)

// NewKeyed returns the Keyed limiter whose keys live under prefix on client,
// giving every key limit and every limit added with WithLimit. Every
// process that uses the same prefix shares each key's quota, and must use
// the same limits.
//
// It reads the options WithLimit, WithClock, WithTimeout,
// WithFailurePolicy and OnError. It returns an error for a nil client, an
// empty prefix or one containing '{' or '}' (it is part of the Redis Cluster
// hash tag), a limit that fails Limit.Validate (wrapping
// rxthrottle.ErrInvalidLimit), or a bad option. It does not contact Redis.
func NewKeyed(client redis.Scripter, prefix string, limit rxthrottle.Limit, opts ...Option) (*Keyed, error) {
	if err := checkName("key prefix", prefix); err != nil {
		return nil, err
	}
	s, cfg, err := newSchedule(client, limit, opts)
	if err != nil {
		return nil, err
	}
	k := &Keyed{s: s, prefix: prefix}
	if cfg.policy == FallbackLocal {
		lopts := []rxthrottle.Option{rxthrottle.WithClock(cfg.clock)}
		for _, l := range s.limits[1:] {
			lopts = append(lopts, rxthrottle.WithLimit(l))
		}
		if k.local, err = rxthrottle.NewKeyed(limit, lopts...); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Wait blocks until the caller may go on key's schedule, and returns nil.
// If ctx ends first it returns ctx.Err(), and gives the slot back when it
// can. An empty key is an error. If Redis fails, the FailurePolicy decides:
// by default Wait returns a *StoreError wrapping ErrStoreUnavailable.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	if key == "" {
		return errEmptyKey
	}
	return k.s.wait(ctx, k.Keys(key), key, keyedFallback{k.local})
}

// Allow admits the caller of key if it may go now, without waiting, and
// records the admission; otherwise it returns false and records nothing. An
// empty key is an error. If Redis fails, the FailurePolicy decides.
func (k *Keyed) Allow(ctx context.Context, key string) (bool, error) {
	if key == "" {
		return false, errEmptyKey
	}
	return k.s.allow(ctx, k.Keys(key), key, keyedFallback{k.local})
}

// Pause holds back every caller of key, in every process, until until. A
// Pause never shortens a longer one; a time in the past and an empty key do
// nothing. Like Bucket.Pause it is best effort: a failure goes to OnError,
// and with FallbackLocal the local limiter's key is paused anyway.
func (k *Keyed) Pause(key string, until time.Time) {
	if key == "" {
		return
	}
	if k.local != nil {
		k.local.Pause(key, until)
	}
	k.s.pause(k.Keys(key)[1], until)
}

// Stats returns this process's counters over all keys: admissions, waits,
// cancellations and the callers waiting now. Free, KeysLive and KeysBlocked
// are 0: the keys live in Redis, and counting them would cost a scan.
func (k *Keyed) Stats() rxthrottle.Stats { return k.s.stats.snapshot() }

// Prefix returns the limiter's key prefix.
func (k *Keyed) Prefix() string { return k.prefix }

// Limits returns the limits every key has, the first one first.
func (k *Keyed) Limits() []rxthrottle.Limit { return slices.Clone(k.s.limits) }

// Keys returns the Redis keys that hold key's state: the list of emission
// times and the pause-until time. Their hash tag is "<prefix>:<key>" (up to
// a '}' in key, if any), so they are in one Redis Cluster slot.
func (k *Keyed) Keys(key string) []string { return scheduleKeys(keyedTag(k.prefix, key)) }
