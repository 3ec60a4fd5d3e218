package redisstore

import "sync"

// keyWaiters counts a Keyed limiter's callers of this process waiting, per
// key: WithMaxQueue bounds each key's (SPEC.md, "Queue bound": on a keyed
// limiter the bound is per key). A key with none has no entry. A
// Bucket's are schedule.waiters.
type keyWaiters struct {
	mu sync.Mutex
	m  map[string]int64
}

// addWaiting counts d more callers of this process waiting on the schedule
// stored under key (its first key).
func (s *schedule) addWaiting(key string, d int64) {
	if s.tiers == nil {
		s.waiters.Add(d)
		return
	}
	w := &s.keyWaiters
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.m[key] + d; n != 0 {
		if w.m == nil {
			w.m = map[string]int64{}
		}
		w.m[key] = n
	} else {
		delete(w.m, key)
	}
}

// waiting returns the callers of this process waiting on the schedule
// stored under key.
func (s *schedule) waiting(key string) int64 {
	if s.tiers == nil {
		return s.waiters.Load()
	}
	w := &s.keyWaiters
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[key]
}
