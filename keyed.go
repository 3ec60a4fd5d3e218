package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// ErrTooManyKeys is wrapped by the error a Keyed limiter bounded by
// WithMaxKeys returns when a new key arrives, the bound is reached and no key
// is idle enough to be forgotten ("rxthrottle: too many keys: key ..."). A
// guard.MemoryStore bounded to a number of keys wraps it too. Test for it
// with errors.Is.
var ErrTooManyKeys = errors.New("too many keys")

var errEmptyKey = errors.New("rxthrottle: empty key")

// Keyed is a limiter with one independent schedule per key: a user ID, an
// API token, a host. Each key has the limits given to NewKeyed and keeps
// SPEC.md's schedule over its own callers alone, so a caller only ever waits
// behind callers of its own key.
//
// Memory follows the keys in use: a key whose tokens are all renewed, with
// no pause and nobody waiting, is indistinguishable from a new one, and is
// forgotten lazily (after WithIdleMargin) by the calls that come later,
// without a goroutine per key; WithMaxKeys bounds the number kept.
//
// Build one with NewKeyed; the zero value is not usable. A Keyed is safe for
// concurrent use. A live key is found without a lock, and callers of
// different keys write no common memory, so they scale across cores.
type Keyed struct {
	// Read on every call.
	clock     clock.Clock
	realClock bool      // clock is clock.New(), read with time.Since
	base      time.Time // shared by every key, so one clock reading serves all
	seed      maphash.Seed
	margin    int64
	maxKeys   int64
	limits    atomic.Pointer[[]Limit]  // written by SetLimit only
	tiers     func(key string) []Limit // WithKeyLimits'; nil if none
	_         [cacheLinePad]byte

	// Written when keys are made or forgotten, and by sweep steps.
	live     atomic.Int64  // keys kept or being made; at most maxKeys if bounded
	roomFrom atomic.Uint32 // the shard the next makeRoom starts at
	_        [cacheLinePad]byte

	shards [keyedShards]shard
}

var _ KeyedLimiter = (*Keyed)(nil)

// NewKeyed returns a Keyed limiter that gives every key limit, and every
// limit added with WithLimit. It reads every option: WithClock, WithLimit,
// WithHoldTimeout, WithSpacing, WithConcurrency, WithAdaptiveConcurrency and
// WithMaxQueue (all per key), OnWait, OnAdmit (their Event carries the key), WithMaxKeys and
// WithIdleMargin, WithKeyLimits (limits per key), and returns an error for
// an invalid limit or option.
func NewKeyed(limit Limit, opts ...Option) (*Keyed, error) {
	cfg, err := buildConfig(limit, opts)
	if err != nil {
		return nil, err
	}
	k := &Keyed{
		clock:     cfg.clock,
		realClock: isRealClock(cfg.clock),
		base:      cfg.clock.Now(),
		margin:    int64(cfg.idleMargin),
		maxKeys:   int64(cfg.maxKeys),
		seed:      maphash.MakeSeed(),
		tiers:     cfg.metering.keyLimits,
	}
	k.limits.Store(&cfg.limits)
	st := newStripes()
	for i := range k.shards {
		s := &k.shards[i]
		s.hooks = *cfg.meteredHooks(&s.agg)
		s.hooks.base = k.base // one clock reading serves every key
		s.agg.stripes = st
	}
	return k, nil
}

// Wait blocks until a token of key is the caller's, then takes it. Callers
// of one key are served in the order they called. If ctx ends first, Wait
// returns ctx.Err() and consumes no token. An empty key is an error, and so
// is a new key beyond WithMaxKeys (ErrTooManyKeys).
func (k *Keyed) Wait(ctx context.Context, key string) error { return k.WaitN(ctx, key, 1) }

// arrive arrives at key's bucket with who's priority and tenant. It returns the bucket
// (as the operators' itemGate) and the waiter to await (nil if admitted at once); notify, if not nil, is
// called when that waiter is granted.
func (k *Keyed) arrive(key string, hold bool, who fairq.Caller, notify func()) (g itemGate, w *waiter, err error) {
	err = k.with(key, true, func(kb *Bucket, now int64) {
		g, w = kb.items(), kb.items().arriveItemLocked(now, hold, who)
		if w != nil && notify != nil {
			w.Notify = notify
			if w.State == granted { // granted while it was being queued
				notify()
			}
		}
	})
	return g, w, err
}

// with runs f on key's bucket, made if need be, at a clock reading taken
// under the bucket's lock, which it holds: the key cannot be forgotten
// while f runs. The hooks f queued run once the lock is released. With
// bounded, a new key beyond WithMaxKeys is an error.
//
// The key is hashed once. On a live key, with reads only the shard and
// writes only the key's own memory and this processor's counters, so
// callers of different keys scale across cores.
func (k *Keyed) with(key string, bounded bool, f func(b *Bucket, now int64)) error {
	if err := k.usable(); err != nil {
		return err
	}
	if key == "" {
		return errEmptyKey
	}
	e, made, err := k.entry(key, maphash.String(k.seed, key), bounded)
	if err != nil {
		return err
	}
	f(&e.Bucket, k.now())
	e.state.calls++
	calls := e.state.calls
	if made || calls%padEvery == 0 {
		// A key's admissions are counted in the stripe of the processor
		// that ran this call: the key is usually called from the same
		// one, and looking the stripe up on every admission cost more
		// than the count. Should the key move, it writes another
		// processor's stripe for a while: slower, never a wrong count.
		e.state.stripe = e.hooks.agg.stripes.local()
		if !made { // a key used once keeps its small ring
			e.padRingLocked()
		}
	}
	e.unlock() // and then the hooks f queued
	if made || calls%sweepEvery == 0 {
		k.sweepStep(e.hash>>32 + uint64(calls/sweepEvery))
	}
	return nil
}

// errTooMany is the error for a new key refused with n keys kept.
func (k *Keyed) errTooMany(key string, n int64) error {
	return fmt.Errorf("rxthrottle: %w: key %q would be number %d of at most %d, and none is idle",
		ErrTooManyKeys, key, n+1, k.maxKeys)
}

// Pause holds every caller of key back until until (a 429's Retry-After for
// that user). A Pause never shortens a longer one. A pause is never dropped:
// it keeps its key even beyond WithMaxKeys. An empty key is ignored.
func (k *Keyed) Pause(key string, until time.Time) {
	_ = k.with(key, false, func(b *Bucket, now int64) { b.pauseLocked(until, now) })
}

// SetLimit replaces the limits of every key, live and future, as
// Bucket.SetLimit does for one, except the keys WithKeyLimits gave limits of
// their own: those keep them. It visits every live key.
func (k *Keyed) SetLimit(limit Limit, more ...Limit) error {
	if err := k.usable(); err != nil {
		return err
	}
	limits, err := validLimits(limit, more...)
	if err != nil {
		return err
	}
	k.limits.Store(&limits)
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		var calls []hookCall
		s.eachLocked(func(e *keyEntry) {
			if e.state.tiered {
				return // a tier keeps its own limits
			}
			e.setLimitsLocked(limits, k.now())
			calls = append(calls, e.takeCallsLocked()...)
		})
		s.mu.Unlock()
		runHooks(calls)
	}
	return nil
}

// HoldTimeout returns how long a token of Acquire may stay held before
// its hold ends by itself (WithHoldTimeout, DefaultHoldTimeout by
// default), the same for every key. The operators over a Limiter that is
// not a *Bucket, such as ForKey's, read it: ThrottleWith and ThrottleChan
// change an item's token for a new one before it can time out, and
// ThrottleMapWith ends fn's context at it.
func (k *Keyed) HoldTimeout() time.Duration {
	if k.usable() != nil {
		return DefaultHoldTimeout
	}
	return k.shards[0].hooks.holdTimeout
}

// holdClock returns the clock k's holds time out on (holdTimeoutOf), nil
// for a Keyed not built by NewKeyed.
func (k *Keyed) holdClock() clock.Clock {
	if k.usable() != nil {
		return nil
	}
	return k.clock
}

// Limits returns the limits every key has, the first one first.
func (k *Keyed) Limits() []Limit {
	if k.usable() != nil {
		return nil
	}
	return append([]Limit(nil), *k.limits.Load()...)
}

// Stats returns the counters over all keys, including forgotten ones.
// KeysBlocked counts the keys with at least one caller waiting, for a token
// or for a pause to end; a paused key that nobody waits on is not counted.
// Free is always 0. It costs the same for any number of keys and does not
// allocate.
func (k *Keyed) Stats() Stats {
	var st Stats
	if k.usable() != nil {
		return st
	}
	for i := range k.shards {
		st.add(k.shards[i].agg.snapshot())
	}
	k.shards[0].agg.stripes.sum(&st)
	st.KeysLive = int(k.live.Load())
	return st
}

// now reads the clock as an offset from the base shared by all keys: the
// real clock with time.Since, as a Bucket does (bucket_clock.go).
func (k *Keyed) now() int64 {
	if k.realClock {
		return int64(time.Since(k.base))
	}
	return int64(k.clock.Since(k.base))
}
