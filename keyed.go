package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrTooManyKeys is returned by a Keyed limiter bounded by WithMaxKeys when
// a new key arrives, the bound is reached and no key is idle enough to be
// forgotten.
var ErrTooManyKeys = errors.New("rxthrottle: too many keys")

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
// concurrent use; keys are spread over shards so that callers of different
// keys rarely contend.
type Keyed struct {
	clock    clock.Clock
	base     time.Time // shared by every key, so one clock reading serves all
	margin   int64
	maxKeys  int64
	limits   atomic.Pointer[[]Limit]
	seed     maphash.Seed
	live     atomic.Int64  // keys kept or being made; at most maxKeys if bounded
	roomFrom atomic.Uint32 // where the next makeRoom starts
	shards   [keyedShards]shard
}

const keyedShards = 32

// shard holds the keys that hash to it, in a ring that the lazy sweep walks,
// and their counters: nothing is shared between shards on the hot path, so
// callers of different shards do not contend.
type shard struct {
	mu    sync.Mutex
	keys  map[string]*keyEntry
	sweep *keyEntry // the next entry the sweep examines; nil if empty
	calls uint32    // paces the sweep of other shards
	hooks hooks     // the Keyed's hooks, with agg pointing to this shard's
	agg   aggregate
	_     [64]byte // keeps neighbouring shards off each other's cache lines
}

// keyEntry is one key's bucket, linked in its shard's sweep ring.
type keyEntry struct {
	Bucket
	prev, next *keyEntry
}

var _ KeyedLimiter = (*Keyed)(nil)

// NewKeyed returns a Keyed limiter that gives every key limit, and every
// limit added with WithLimit. It reads the options WithClock, WithLimit,
// OnWait, OnAdmit (their Event carries the key), WithMaxKeys and
// WithIdleMargin, and returns an error for an invalid limit or option.
func NewKeyed(limit Limit, opts ...Option) (*Keyed, error) {
	cfg, err := buildConfig(limit, opts)
	if err != nil {
		return nil, err
	}
	k := &Keyed{
		clock:   cfg.clock,
		base:    cfg.clock.Now(),
		margin:  int64(cfg.idleMargin),
		maxKeys: int64(cfg.maxKeys),
		seed:    maphash.MakeSeed(),
	}
	k.limits.Store(&cfg.limits)
	for i := range k.shards {
		s := &k.shards[i]
		s.keys = make(map[string]*keyEntry)
		s.hooks = *cfg.hooks(&s.agg)
	}
	return k, nil
}

// Wait blocks until a token of key is the caller's, then takes it. Callers
// of one key are served in the order they called. If ctx ends first, Wait
// returns ctx.Err() and consumes no token. An empty key is an error, and so
// is a new key beyond WithMaxKeys (ErrTooManyKeys).
func (k *Keyed) Wait(ctx context.Context, key string) error { return k.WaitN(ctx, key, 1) }

// arrive arrives at key's bucket. It returns the bucket and the waiter to
// await (nil if admitted at once); notify, if not nil, is called when that
// waiter is granted.
func (k *Keyed) arrive(key string, hold bool, notify func()) (b *Bucket, w *waiter, err error) {
	err = k.with(key, true, func(kb *Bucket, now int64) {
		b, w = kb, kb.arriveLocked(now, hold)
		if w != nil && notify != nil {
			w.notify = notify
			if w.state == granted { // granted while it was being queued
				notify()
			}
		}
	})
	return b, w, err
}

// with runs f on key's bucket, made if need be, at now, with the locks of
// the shard and of the bucket held, so that the key cannot be forgotten in
// between; now is read under the bucket's lock. The hooks f queued run once
// both locks are released. With bounded, a new key beyond WithMaxKeys is an
// error.
func (k *Keyed) with(key string, bounded bool, f func(b *Bucket, now int64)) error {
	if err := k.usable(); err != nil {
		return err
	}
	if key == "" {
		return errEmptyKey
	}
	s := k.shard(key)
	for {
		s.mu.Lock()
		if b := s.get(k, key, k.now(), bounded); b != nil {
			b.mu.Lock()
			f(b, k.now()) // read under the bucket's lock
			calls := b.takeCallsLocked()
			b.mu.Unlock()
			s.mu.Unlock()
			runHooks(calls)
			return nil
		}
		s.mu.Unlock()
		// The bound is reached. Make room with no lock held, so that
		// callers making room in different shards cannot deadlock, then
		// look the key up again: another caller may have made it.
		if !k.makeRoom() {
			if n := k.live.Load(); n >= k.maxKeys {
				return fmt.Errorf("%w: key %q would be number %d of at most %d, and none is idle",
					ErrTooManyKeys, key, n+1, k.maxKeys)
			}
		}
	}
}

// Pause holds every caller of key back until until (a 429's Retry-After for
// that user). A Pause never shortens a longer one. A pause is never dropped:
// it keeps its key even beyond WithMaxKeys. An empty key is ignored.
func (k *Keyed) Pause(key string, until time.Time) {
	_ = k.with(key, false, func(b *Bucket, now int64) { b.pauseLocked(until, now) })
}

// SetLimit replaces the limits of every key, live and future, as
// Bucket.SetLimit does for one. It visits every live key.
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
		for _, e := range s.keys {
			e.mu.Lock()
			e.setLimitsLocked(limits, k.now())
			calls = append(calls, e.takeCallsLocked()...)
			e.mu.Unlock()
		}
		s.mu.Unlock()
		runHooks(calls)
	}
	return nil
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
	st.KeysLive = int(k.live.Load())
	return st
}

// now reads the clock as an offset from the base shared by all keys.
func (k *Keyed) now() int64 { return int64(k.clock.Since(k.base)) }

func (k *Keyed) shard(key string) *shard {
	return &k.shards[maphash.String(k.seed, key)%keyedShards]
}

// get returns key's bucket, making it if need be, or nil if key is new,
// bounded and the bound is reached (the caller makes room and retries). On
// the way it examines a few keys and forgets those that are idle, so that
// memory follows the keys in use: one of its own shard when it makes a key
// and on every 8th call, and one of another shard (round-robin, if its lock
// is free) when it makes a key and on every 64th call, so that shards no
// caller visits any more are swept too. Each key examined is memory another
// core may have to hand over, hence the pacing. Requires s.mu.
func (s *shard) get(k *Keyed, key string, now int64, bounded bool) *Bucket {
	s.calls++
	if s.calls%8 == 0 {
		// Before the lookup, so that it cannot forget the key it returns.
		s.forgetIdle(k, now, 1)
	}
	e, ok := s.keys[key]
	if !ok || s.calls%64 == 0 {
		if o := &k.shards[(s.calls+uint32(len(s.keys)))%keyedShards]; o != s && o.mu.TryLock() {
			o.forgetIdle(k, now, 1)
			o.mu.Unlock()
		}
	}
	if ok {
		return &e.Bucket
	}
	s.forgetIdle(k, now, 1)
	if !k.reserve(bounded) {
		return nil
	}
	e = &keyEntry{}
	e.init(k.clock, k.base, *k.limits.Load(), &s.hooks, key)
	s.keys[key] = e
	if s.sweep == nil {
		e.prev, e.next = e, e
		s.sweep = e
	} else { // insert just behind the sweep point: examined last
		e.prev, e.next = s.sweep.prev, s.sweep
		e.prev.next, s.sweep.prev = e, e
	}
	return &e.Bucket
}

// reserve counts one more live key before it is made. With bounded and a
// bound, it refuses (and counts nothing) once the bound is reached: the
// count never exceeds the bound, even for an instant, so the bound holds
// exactly however many callers make keys at once. Unbounded (Pause) it
// always counts the key.
func (k *Keyed) reserve(bounded bool) bool {
	if !bounded || k.maxKeys == 0 {
		k.live.Add(1)
		return true
	}
	for {
		n := k.live.Load()
		if n >= k.maxKeys {
			return false
		}
		if k.live.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// forgetIdle examines up to n keys from the sweep point and forgets those
// that have been idle for the margin; the others are passed over until the
// sweep comes round again. Requires s.mu.
func (s *shard) forgetIdle(k *Keyed, now int64, n int) (forgot int) {
	for ; n > 0 && s.sweep != nil; n-- {
		e := s.sweep
		e.mu.Lock()
		idle := e.idleLocked(now - k.margin)
		e.mu.Unlock()
		if !idle {
			s.sweep = e.next
			continue
		}
		s.remove(e)
		k.live.Add(-1)
		forgot++
	}
	return forgot
}

// remove unlinks e. Requires s.mu.
func (s *shard) remove(e *keyEntry) {
	delete(s.keys, e.key)
	if e.next == e {
		s.sweep = nil
	} else {
		e.prev.next, e.next.prev = e.next, e.prev
		if s.sweep == e {
			s.sweep = e.next
		}
	}
	e.prev, e.next = nil, nil
}

// makeRoom forgets the idle keys of one shard after another, starting
// from a shard that turns with each call, until a shard had one; it returns
// false if no key of any shard was idle. It locks one shard at a time and
// never skips a busy one: a caller that holds no lock can wait for it.
func (k *Keyed) makeRoom() bool {
	start := k.roomFrom.Add(1)
	for i := range uint32(keyedShards) {
		o := &k.shards[(start+i)%keyedShards]
		o.mu.Lock()
		forgot := o.forgetIdle(k, k.now(), len(o.keys))
		o.mu.Unlock()
		if forgot > 0 {
			return true
		}
	}
	return false
}
