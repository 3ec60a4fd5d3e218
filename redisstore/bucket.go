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
// departure time d from the shared history on Redis's clock, records it,
// and returns it with Redis's now (callers of one process that arrive while
// a call is in flight share the next one, which admits them in their
// arrival order: group commit, with no timer); the caller then waits d-now on the
// local clock (rxthrottle.WithClock). Because the wait starts when the reply arrives,
// a caller goes slightly after d, never before. The window holds for
// admission times on Redis's clock; what a remote API sees also includes
// each caller's network delay after the reply: hold the token (Acquire)
// for the guarantee at the server.
//
// # Held tokens
//
// Acquire returns a Token held in Redis as a lease: it counts against every
// limit, in every process, until Token.Release records its completion at
// Redis's now (in the script), and renews W after that; or until its lease
// deadline (departure + rxthrottle.WithHoldTimeout, on Redis's clock), after which it
// renews at deadline + W. A process that dies holding tokens keeps them
// only until their deadlines. Token.Cancel gives a token back unused.
// Release and Cancel each go to Redis in the caller's goroutine, bounded
// by WithTimeout (or one second): in a script run of their own, or, when
// a call of this process is in flight, in the next one with the callers
// queued meanwhile (group commit); if it fails, OnError hears of it and
// the lease ends the hold.
//
// A caller that needs a token held elsewhere cannot know its time in
// advance. It asks Redis, learns it is blocked and when the earliest lease
// ends, and sleeps until then, or at most the poll interval
// (WithPollInterval, by default a quarter of the smallest window), or
// until a Release or Cancel in this process wakes it at once; then it asks
// again. A released token renews W after its release, so a caller that
// asks again within W of the release still departs at SPEC.md's instant.
// Within a process, blocked callers keep their arrival order: only the
// first of them asks Redis again, the others (and callers that arrive
// meanwhile, Allow included) wait behind it. A blocked caller holds no
// place in Redis, though: across processes, the first to ask after a
// release gets the token, not necessarily the one that has waited longest.
//
// # Cancellation and deadlines
//
// A caller that gives up leaves the schedule as if it had never arrived:
// a Wait or Acquire whose context ends before its departure withdraws its
// reservation, and one whose context ends during the round trip returns
// at once and has its admission withdrawn when the answer comes. A caller
// whose context deadline comes before its departure is never reserved;
// one whose deadline comes before the earliest instant it could possibly
// go is refused at once (rxthrottle.ErrDeadline). See the package doc,
// "Cancellation and deadlines".
//
// Bucket implements rxthrottle.Limiter, so rxthrottle.ThrottleWith,
// ThrottleMapWith and httpthrottle take it unchanged. It is safe for
// concurrent use. Build it with NewBucket.
type Bucket struct {
	s     *schedule
	name  string
	keys  []string           // done, held, state, runs
	local *rxthrottle.Bucket // FallbackLocal only
	pool  *leasePool         // WithLease only
}

var _ rxthrottle.Limiter = (*Bucket)(nil)

// NewBucket returns the Bucket named name on client (a *redis.Client, a
// *redis.ClusterClient or a *redis.Ring), enforcing limit and every limit
// added with rxthrottle.WithLimit at the same time. Every process that
// uses the same name shares the quota, and its configuration: the limits,
// the hold timeout, the spacing and the concurrency cap stored by the first process that used
// it, or by the latest SetLimit (see the package doc, "Configuration").
//
// It reads rxthrottle's options WithLimit, WithClock, WithHoldTimeout,
// WithSpacing, OnWait and OnAdmit (called as the in-memory limiters call
// them, on the caller's goroutine after its round trip, so
// rxprom.ObserveWait works on a shared quota), WithConcurrency (a cap on
// the holds open at once across every process: the leases are the holds;
// every process must use the same cap), WithAdaptiveConcurrency (a cap on
// this process's holds, see the package doc, "Adaptive concurrency") and
// WithMaxQueue (a bound on the callers of this process waiting at once),
// and this package's WithTimeout, WithFailurePolicy, WithRetryBackoff,
// WithPollInterval, WithStrictConfig, WithLease (see the package doc,
// "Leases") and OnError. rxthrottle.WithPriority on a caller's context
// orders the callers of this process as SPEC.md's "Priorities" does
// (group commit, the callers given a departure they have not reached,
// and the line of blocked callers; see the package doc, "Priorities");
// across processes the order is the scripts'.
// Token.ReleaseN records what a held call used. It returns an error for a
// nil client, an empty name or one containing '{' or '}' (the name is the
// Redis Cluster hash tag), a limit that fails Limit.Validate (wrapping
// rxthrottle.ErrInvalidLimit) or whose window Redis cannot count, or a bad
// option or one it does not read. It does not contact Redis.
func NewBucket(client redis.Scripter, name string, limit rxthrottle.Limit, opts ...Option) (*Bucket, error) {
	if err := checkName("bucket name", name); err != nil {
		return nil, err
	}
	s, cfg, err := newSchedule("NewBucket", client, limit, opts)
	if err != nil {
		return nil, err
	}
	b := &Bucket{s: s, name: name, keys: scheduleKeys(name)}
	if cfg.lease {
		if err := checkLeaseAdaptive(cfg); err != nil {
			return nil, err
		}
		if err := checkLease(cfg); err != nil {
			return nil, err
		}
		b.pool = newLeasePool(s, name, b.keys, cfg.leaseMax)
	}
	s.conf.keys = []string{keyPrefix + name + suffixConf, b.keys[2]}
	if cfg.policy == FallbackLocal {
		if b.local, err = rxthrottle.NewBucket(limit, localOptions(cfg)...); err != nil {
			return nil, err
		}
		s.conf.onLimits = func(l []rxthrottle.Limit) error { return b.local.SetLimit(l[0], l[1:]...) }
	}
	return b, nil
}

// Wait blocks until the caller may go, and returns nil. If ctx ends first it
// returns ctx.Err(), and withdraws its reservation (see Bucket); if ctx's
// deadline comes before the earliest instant it could possibly go, it
// returns at once an error wrapping rxthrottle.ErrDeadline and
// context.DeadlineExceeded, having reserved nothing. If Redis
// fails, the FailurePolicy decides: by default Wait returns a *StoreError
// wrapping ErrStoreUnavailable and the client's error.
func (b *Bucket) Wait(ctx context.Context) error {
	_, err := b.take(ctx, 1, false, "Wait")
	return err
}

// WaitN is Wait for a caller that costs n tokens: it takes them all at
// once, and all n renew W after its departure. n < 1 or n above the
// smallest N is an error wrapping rxthrottle.ErrInvalidCost, at once.
func (b *Bucket) WaitN(ctx context.Context, n int) error {
	_, err := b.take(ctx, n, false, "WaitN")
	return err
}

// Acquire waits like Wait and returns the token held in Redis until
// Token.Release (see Bucket, "Held tokens"). If Redis fails, FailOpen
// returns the zero Token (a no-op) and FallbackLocal a token of the local
// bucket.
func (b *Bucket) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	return b.take(ctx, 1, true, "Acquire")
}

// AcquireN is Acquire for n tokens at once, released together.
func (b *Bucket) AcquireN(ctx context.Context, n int) (rxthrottle.Token, error) {
	return b.take(ctx, n, true, "AcquireN")
}

// take is Wait (hold false) and Acquire of n tokens, named op in errors:
// from a lease if the pool serves it (WithLease), else on the normal path.
func (b *Bucket) take(ctx context.Context, n int, hold bool, op string) (rxthrottle.Token, error) {
	if b.pool != nil {
		tok, ok, done, err := b.pool.take(ctx, n, hold)
		if ok {
			return tok, err
		}
		return b.normal(ctx, n, hold, op, done)
	}
	return b.s.take(ctx, ask{keys: b.keys, key: b.name, op: op, n: n, hold: hold, local: bucketFallback{b.local}})
}

// normal is take on the normal path for a caller the lease pool did not
// serve; done is nil for one it refused at once (lease_take.go).
func (b *Bucket) normal(ctx context.Context, n int, hold bool, op string, done func(error)) (rxthrottle.Token, error) {
	tok, err := b.s.take(ctx, ask{keys: b.keys, key: b.name, op: op, n: n, hold: hold, local: bucketFallback{b.local}, sent: done != nil})
	if done != nil {
		done(err) // the pool charges its tenant if it went (lease_normal.go)
	}
	return tok, err
}

// Allow admits the caller if it may go now, without waiting, and records
// the admission; otherwise it returns false and records nothing. If Redis
// fails, the FailurePolicy decides: by default Allow returns false and a
// *StoreError.
func (b *Bucket) Allow(ctx context.Context) (bool, error) {
	if b.pool != nil && b.pool.allow(ctx, 1) {
		return true, nil
	}
	return b.s.allow(ctx, b.keys, b.name, 1, bucketFallback{b.local})
}

// AllowN is Allow for n tokens at once.
func (b *Bucket) AllowN(ctx context.Context, n int) (bool, error) {
	if b.pool != nil && b.pool.allow(ctx, n) {
		return true, nil
	}
	return b.s.allow(ctx, b.keys, b.name, n, bucketFallback{b.local})
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
	if b.pool != nil {
		b.pool.pause(until)
	}
	b.s.pause(b.keys, until)
}

// SetLimit replaces the bucket's limits for every process that shares it.
// The configuration lives in Redis with the quota (the limits, the
// spacing, the hold timeout and the concurrency cap, stored by the first
// process that uses the bucket): SetLimit stores the new limits there, and
// in the same script marks the schedule so that every admission after it,
// in any process, runs under them (a process still under the old ones is
// told so, reads them and asks again). A process also reads it every
// 250ms while it admits or a caller of it sleeps on a departure, and none
// admits under one read more than 500ms before, on Redis's clock. A
// process built with other limits follows the stored ones (OnError hears
// of it once), or, with WithStrictConfig, fails its calls with an error
// wrapping ErrConfigMismatch. The history kept in Redis reaches one
// largest window of the limits in force back, so a window made longer
// sees only that much of the past. Once a process has the new limits, a
// caller of it sleeping on a departure given under the old ones asks
// again under them, in its place, or fails with an error wrapping
// rxthrottle.ErrInvalidCost (in Stats.Cancelled) if its cost is above
// their smallest N (SPEC.md, "Changing limits").
//
// It returns an error, and changes nothing, for an invalid limit, and a
// *StoreError if Redis fails (bounded by WithTimeout or DefaultTimeout);
// the limits may then have been stored or not.
func (b *Bucket) SetLimit(limit rxthrottle.Limit, more ...rxthrottle.Limit) error {
	return b.s.setLimit(limit, more)
}

// Stats returns this process's counters: admissions, waits, cancellations,
// refusals, failures (FailClosed's *StoreErrors) and the callers waiting
// now. Free is always 0: the free tokens are a property of the shared
// state, not of this process.
func (b *Bucket) Stats() rxthrottle.Stats { return b.s.statsOf(b.keys[0]) }

// Name returns the bucket's name.
func (b *Bucket) Name() string { return b.name }

// Limits returns the bucket's limits in force in this process, the first
// one first: the stored ones once this process has read them (see
// SetLimit), its own before.
func (b *Bucket) Limits() []rxthrottle.Limit { return slices.Clone(b.s.lim.Load().limits) }

// Keys returns the Redis keys that hold the bucket's state: the completions
// (a ZSET), the holds (a ZSET), the state (a HASH) and the completions of
// leased tokens (a ZSET, a member for each run of tokens, with their
// count: made by WithLease only). They share one hash tag, so they are in
// one Redis Cluster slot.
func (b *Bucket) Keys() []string { return slices.Clone(b.keys) }

// Close gives back to Redis the tokens this Bucket leased and did not use,
// and reports the uses not yet reported (WithLease), in calls bounded by
// WithTimeout (or one second) with any go-redis client; it returns a
// *StoreError for a call that failed (those tokens then stay held in
// Redis until their lease deadline).
// Tokens that Acquire took from a lease and that are still held are
// reported at their release. After Close the Bucket keeps working,
// without leases: every caller takes a round trip. Without WithLease,
// Close does nothing and returns nil.
func (b *Bucket) Close() error {
	if b.pool == nil {
		return nil
	}
	return b.pool.close()
}

// Leased returns the number of this process's callers admitted from a
// lease (WithLease), without a round trip of their own; Stats counts them
// among the admitted too.
func (b *Bucket) Leased() uint64 {
	if b.pool == nil {
		return 0
	}
	return b.pool.leased.Load()
}
