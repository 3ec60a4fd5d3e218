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
// with the limits given to NewKeyed (or its own: rxthrottle.WithKeyLimits),
// kept in Redis so that every process
// using the same prefix shares each key's quota. Each key's state is the
// state of a Bucket (see there for the model, held tokens, cancellation and
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
// giving every key limit and every limit added with rxthrottle.WithLimit. Every
// process that uses the same prefix shares each key's quota, and one
// configuration for all keys, as for a Bucket (see NewBucket).
//
// It reads rxthrottle's options WithLimit, WithClock, WithHoldTimeout,
// WithSpacing, OnWait and OnAdmit (the hooks are called as the in-memory
// limiters call them, on the caller's goroutine after its round trip, so
// rxprom.ObserveWait works on a shared quota), WithConcurrency (a cap on
// the holds open at once across every process: the leases are the holds;
// every process must use the same cap), WithAdaptiveConcurrency (a cap
// on this process's holds of each key, see the package doc, "Adaptive
// concurrency") and WithMaxQueue (a bound on the callers of this process
// waiting at once on each key), WithKeyLimits (see below), and this package's
// WithTimeout, WithFailurePolicy, WithRetryBackoff, WithPollInterval,
// WithStrictConfig and OnError. rxthrottle.WithPriority on a caller's
// context orders the callers of this process of each key as SPEC.md's
// "Priorities" does (see the package doc, "Priorities"); across
// processes the order is the scripts'.
// Token.ReleaseN records what a held call used.
//
// rxthrottle.WithKeyLimits gives keys limits of their own (tiers, SPEC.md
// "Keys"): the function is called for every admission of a key, outside
// any lock, and the limits it returns (nil or none: the limiter's, the
// stored ones) are the key's; its panic, or limits that fail
// Limit.Validate or whose window Redis cannot count, fail that call with
// an error (wrapping rxthrottle.ErrInvalidLimit for the limits), admitting
// nothing. SetLimit changes the limiter's limits, not the tiers. A key's
// schedule records in Redis the limits it runs under, so that processes
// whose functions disagree (or one without WithKeyLimits) still run one
// schedule per key: the first admission of a key under the stored
// configuration's version (after a SetLimit anywhere, or once the key's
// state has expired) records its limits, and a process that then gives
// the key other ones follows the recorded ones for that key (OnError hears
// of it once per pair of limit sets) or, with WithStrictConfig, fails the
// call with an error wrapping ErrConfigMismatch that names the key and
// both limit sets. With FallbackLocal, the local limiter has the same
// tiers (fixed when the local limiter first sees a key, as
// rxthrottle.Keyed does).
//
// It returns an error for a nil client, an
// empty prefix or one containing '{' or '}' (it is part of the Redis
// Cluster hash tag), a limit that fails Limit.Validate (wrapping
// rxthrottle.ErrInvalidLimit) or whose window Redis cannot count, or a bad
// option or one it does not read. It does not contact Redis.
func NewKeyed(client redis.Scripter, prefix string, limit rxthrottle.Limit, opts ...Option) (*Keyed, error) {
	if err := checkName("key prefix", prefix); err != nil {
		return nil, err
	}
	s, cfg, err := newSchedule("NewKeyed", client, limit, opts)
	if err != nil {
		return nil, err
	}
	s.hooks.keyed = true
	s.tiers.prefix = prefix
	k := &Keyed{s: s, prefix: prefix}
	s.conf.keys = []string{keyPrefix + prefix + suffixKeyedConf}
	if cfg.policy == FallbackLocal {
		lopts := localOptions(cfg)
		if cfg.keyLimits != nil {
			lopts = append(lopts, rxthrottle.WithKeyLimits(cfg.keyLimits))
		}
		if k.local, err = rxthrottle.NewKeyed(limit, lopts...); err != nil {
			return nil, err
		}
		s.conf.onLimits = func(l []rxthrottle.Limit) error { return k.local.SetLimit(l[0], l[1:]...) }
	}
	return k, nil
}

// Wait blocks until the caller may go on key's schedule, and returns nil.
// If ctx ends first it returns ctx.Err(), and withdraws its reservation. An
// empty key is an error. If Redis fails, the FailurePolicy decides: by
// default Wait returns a *StoreError wrapping ErrStoreUnavailable.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	_, err := k.take(ctx, key, 1, false, "Wait")
	return err
}

// WaitN is Wait for a caller of key that costs n tokens (see
// Bucket.WaitN).
func (k *Keyed) WaitN(ctx context.Context, key string, n int) error {
	_, err := k.take(ctx, key, n, false, "WaitN")
	return err
}

// Acquire waits like Wait on key's schedule and returns key's token held
// in Redis until Token.Release (see Bucket, "Held tokens").
func (k *Keyed) Acquire(ctx context.Context, key string) (rxthrottle.Token, error) {
	return k.take(ctx, key, 1, true, "Acquire")
}

// AcquireN is Acquire for n tokens of key at once.
func (k *Keyed) AcquireN(ctx context.Context, key string, n int) (rxthrottle.Token, error) {
	return k.take(ctx, key, n, true, "AcquireN")
}

// take admits a caller of n tokens of key (held: Acquire); op names the
// method in errors. Bad arguments are refused in their order (SPEC.md,
// "Cancellation"): a nil context, then an empty key, then the cost (in
// s.take), all before the context's end.
func (k *Keyed) take(ctx context.Context, key string, n int, hold bool, op string) (rxthrottle.Token, error) {
	if ctx == nil {
		return rxthrottle.Token{}, errNilContext
	}
	if key == "" {
		return rxthrottle.Token{}, errEmptyKey
	}
	return k.s.take(ctx, ask{keys: k.keys(key), key: key, op: op, n: n, hold: hold, local: keyedFallback{k.local}})
}

// Allow admits the caller of key if it may go now, without waiting, and
// records the admission; otherwise it returns false and records nothing. An
// empty key is an error. If Redis fails, the FailurePolicy decides.
func (k *Keyed) Allow(ctx context.Context, key string) (bool, error) {
	return k.AllowN(ctx, key, 1)
}

// AllowN is Allow for n tokens of key at once.
func (k *Keyed) AllowN(ctx context.Context, key string, n int) (bool, error) {
	if ctx == nil { // first, as in take
		return false, errNilContext
	}
	if key == "" {
		return false, errEmptyKey
	}
	return k.s.allow(ctx, k.keys(key), key, n, keyedFallback{k.local})
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
	k.s.pause(k.keys(key), until)
}

// SetLimit replaces the limits of every key for every process that shares
// the limiter, as Bucket.SetLimit does, through one configuration for the
// prefix (rxthrottle:{prefix}:keyconf). A key's schedule runs under the new
// limits from its first admission by a process that has them; every
// process has them within 500ms on Redis's clock (on a Redis Cluster,
// plus the skew between the clocks of the configuration's node and the
// key's).
func (k *Keyed) SetLimit(limit rxthrottle.Limit, more ...rxthrottle.Limit) error {
	return k.s.setLimit(limit, more)
}

// Stats returns this process's counters over all keys: admissions, waits,
// cancellations, refusals, failures (FailClosed's *StoreErrors) and the
// callers waiting now. Free, KeysLive and KeysBlocked
// are 0: the keys live in Redis, and counting them would cost a scan.
func (k *Keyed) Stats() rxthrottle.Stats { return k.s.stats.snapshot() }

// Prefix returns the limiter's key prefix.
func (k *Keyed) Prefix() string { return k.prefix }

// Limits returns the limits every key has, the first one first.
func (k *Keyed) Limits() []rxthrottle.Limit { return slices.Clone(k.s.lim.Load().limits) }

// Keys returns the Redis keys that hold key's state: completions, holds
// and state. Their hash tag is "<prefix>:<key>" (up to a '}' in key, if
// any), so they are in one Redis Cluster slot.
func (k *Keyed) Keys(key string) []string { return k.keys(key)[:3:3] }

// keys are key's keys as the scripts take them: Keys and the runs of
// leased tokens (which a Keyed limiter, leasing none, never makes).
func (k *Keyed) keys(key string) []string { return scheduleKeys(keyedTag(k.prefix, key)) }
