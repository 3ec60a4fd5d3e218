package rxthrottle

import (
	"sync"
	"sync/atomic"
)

// keyedShards is the number of shards of a Keyed limiter. Lookups take no
// lock; the shards spread the callers that make and forget keys.
const keyedShards = 32

// shard holds the keys whose hash ends in its number. Its fields are laid
// out by who writes them, so that a call on a live key, which only reads
// the shard, never shares a written cache line with another core.
type shard struct {
	// Read on every call; written only when a key comes or goes.
	table atomic.Pointer[keyTable] // nil until the first key
	hooks hooks                    // the Keyed's hooks, with agg pointing to this shard's
	_     [cacheLinePad]byte

	// Written by the callers that make, forget or sweep keys.
	mu     sync.Mutex // held to change the table and to forget keys
	cursor uint64     // the next slot the sweep examines
	_      [cacheLinePad]byte

	agg aggregate // written by callers that queue or cancel
	_   [cacheLinePad]byte
}

// Pacing of the work a call on a live key does beyond its own key, every
// so many calls of that key: padEvery for its ring (padRingLocked), and
// sweepEvery for a sweep step (sweepStep), which locks and reads other
// keys, memory other cores write, hence the long interval.
const (
	padEvery   = 32
	sweepEvery = 256
)

// entry returns key's entry (whose hash is h), made if need be, with its
// lock held: it cannot be forgotten until the caller unlocks it. made says
// it was made now. With bounded, a new key beyond WithMaxKeys is refused
// with errTooMany's error.
//
// A live key is found without any lock but its own: that is the hot path.
// The rest (a new key, or one forgotten since it was found) runs under the
// shard's lock.
func (k *Keyed) entry(key string, h uint64, bounded bool) (e *keyEntry, made bool, err error) {
	s := &k.shards[h%keyedShards]
	if t := s.table.Load(); t != nil {
		if e = t.find(h, key); e != nil && e.lockLive() {
			return e, false, nil
		}
	}
	// The key is new (or was forgotten): its tier, if WithKeyLimits gave
	// one, is read now, with no lock held, since the function is the
	// user's.
	tier, err := k.tierOf(key)
	if err != nil {
		return nil, false, err
	}
	for {
		s.mu.Lock()
		e, made = s.getLocked(k, key, h, bounded, tier)
		if e != nil {
			e.mu.Lock()
			s.mu.Unlock()
			return e, made, nil
		}
		s.mu.Unlock()
		// The bound is reached. Make room with no lock held, so that
		// callers making room in different shards cannot deadlock, then
		// look the key up again: another caller may have made it.
		if !k.makeRoom() {
			if n := k.live.Load(); n >= k.maxKeys {
				return nil, false, k.errTooMany(key, n)
			}
		}
	}
}

// getLocked returns key's entry, making it (and first forgetting an idle
// key of the shard, if the sweep finds one) if need be, with the limits of
// tier or, if tier is nil, the limiter's; or nil if key is new, bounded and
// the bound is reached. Requires s.mu.
func (s *shard) getLocked(k *Keyed, key string, h uint64, bounded bool, tier []Limit) (e *keyEntry, made bool) {
	t := s.table.Load()
	if t != nil {
		if e = t.find(h, key); e != nil {
			return e, false
		}
		s.forgetIdle(k, 1)
	}
	if !k.reserve(bounded) {
		return nil, false
	}
	t = s.table.Load() // forgetIdle may have replaced it
	e = &keyEntry{hash: h, key: key}
	if tier == nil {
		e.init(*k.limits.Load(), &s.hooks, e)
	} else {
		e.init(tier, &s.hooks, e)
		e.state.tiered = true
	}
	if t == nil {
		t = newKeyTable(minTableSize)
		s.table.Store(t)
	} else if u := t.resized(1); u != t {
		t = u
		s.table.Store(t)
	}
	t.put(e)
	return e, true
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

// forgetIdle examines up to n keys from the sweep's cursor and forgets
// those that have been idle for the margin, at a clock reading taken under
// each key's lock; the others are passed over until the sweep comes round
// again. It returns how many it forgot. Requires s.mu.
func (s *shard) forgetIdle(k *Keyed, n int) (forgot int) {
	t := s.table.Load()
	if t == nil {
		return 0
	}
	// Each slot is passed once at most (a forgotten key's slot is looked
	// at again, for the key moved into it), so a sparse table costs at
	// most its size.
	for budget := len(t.tags) + t.count; budget > 0 && n > 0 && t.count > 0; budget-- {
		i := s.cursor & t.mask
		e := t.entries[i].Load()
		if e == nil {
			s.cursor = i + 1
			continue
		}
		n--
		e.mu.Lock()
		idle := e.idleLocked(k.now() - k.margin)
		if idle {
			e.state.dead = true
		}
		e.mu.Unlock()
		if !idle {
			s.cursor = i + 1
			continue
		}
		// The cursor stays: removeAt may move the next entry into slot i.
		t.removeAt(i)
		k.live.Add(-1)
		forgot++
	}
	if u := t.resized(0); u != t {
		s.table.Store(u)
	}
	return forgot
}

// sweepStep examines a few keys of shard i, if no other caller holds its
// lock, so that idle keys are forgotten even when no key is made. The
// callers pick i from their key's hash and calls, which turns over every
// shard without a counter they would all write. It must be called with no
// lock held.
func (k *Keyed) sweepStep(i uint64) {
	o := &k.shards[i%keyedShards]
	if o.mu.TryLock() {
		o.forgetIdle(k, 4)
		o.mu.Unlock()
	}
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
		forgot := 0
		if t := o.table.Load(); t != nil {
			forgot = o.forgetIdle(k, t.count)
		}
		o.mu.Unlock()
		if forgot > 0 {
			return true
		}
	}
	return false
}

// eachLocked calls f on every key of the shard, with the key's lock held.
// Requires s.mu.
func (s *shard) eachLocked(f func(e *keyEntry)) {
	t := s.table.Load()
	if t == nil {
		return
	}
	for i := range t.entries {
		if e := t.entries[i].Load(); e != nil {
			e.mu.Lock()
			f(e)
			e.mu.Unlock()
		}
	}
}

// countLocked returns the number of keys the shard holds. Requires s.mu.
func (s *shard) countLocked() int {
	if t := s.table.Load(); t != nil {
		return t.count
	}
	return 0
}
