package rxthrottle

import "hash/maphash"

// ConcurrencyCap returns key's cap on holds open now: WithConcurrency's,
// or WithAdaptiveConcurrency's as key's has moved (each key learns its
// own); 0 without a cap. A key not kept (never seen, or forgotten) reports
// the cap it would start with, WithAdaptiveConcurrency's min, and is not
// made. ForKey(k, key).Stats().ConcurrencyCap is this value, so an
// exporter given that Limiter shows one key's cap.
func (k *Keyed) ConcurrencyCap(key string) int {
	if k.usable() != nil || key == "" {
		return 0
	}
	h := maphash.String(k.seed, key)
	s := &k.shards[h%keyedShards]
	if t := s.table.Load(); t != nil {
		if e := t.find(h, key); e != nil && e.lockLive() {
			c := e.concurrencyCapLocked()
			e.unlock()
			return c
		}
	}
	if s.hooks.adaptMax > 0 {
		return s.hooks.adaptMin
	}
	return s.hooks.concurrency
}

// keyCapper is a keyed limiter that reports each key's cap on holds open
// (Keyed, redisstore's Keyed).
type keyCapper interface {
	ConcurrencyCap(key string) int
}
