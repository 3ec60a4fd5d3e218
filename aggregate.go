package rxthrottle

import (
	"sync/atomic"
	"time"
)

// aggregate is the Stats of one shard of a Keyed limiter kept as it goes,
// so Stats costs the same for a million keys as for one. The shard's
// buckets update it under their own locks, hence the atomics.
type aggregate struct {
	admitted, waited, cancelled atomic.Uint64
	totalWait, maxWait          atomic.Int64
	waiting                     atomic.Int64 // callers queued over all keys
	keysWaiting                 atomic.Int64 // keys with at least one
}

// admit counts one admission after a wait of d.
func (a *aggregate) admit(d time.Duration) {
	a.admitted.Add(1)
	if d <= 0 {
		return
	}
	a.waited.Add(1)
	a.totalWait.Add(int64(d))
	for {
		m := a.maxWait.Load()
		if int64(d) <= m || a.maxWait.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// queued adds delta callers to the queue gauge; edge says the key's queue
// just went from empty to non-empty (delta > 0) or back (delta < 0).
func (a *aggregate) queued(delta int64, edge bool) {
	a.waiting.Add(delta)
	if edge {
		a.keysWaiting.Add(delta)
	}
}

func (a *aggregate) snapshot() Stats {
	return Stats{
		Admitted:    a.admitted.Load(),
		Waited:      a.waited.Load(),
		Cancelled:   a.cancelled.Load(),
		TotalWait:   time.Duration(a.totalWait.Load()),
		MaxWait:     time.Duration(a.maxWait.Load()),
		Queued:      int(a.waiting.Load()),
		KeysBlocked: int(a.keysWaiting.Load()),
	}
}

// add sums o into s, for the shards of a Keyed limiter.
func (s *Stats) add(o Stats) {
	s.Admitted += o.Admitted
	s.Waited += o.Waited
	s.Cancelled += o.Cancelled
	s.TotalWait += o.TotalWait
	s.MaxWait = max(s.MaxWait, o.MaxWait)
	s.Queued += o.Queued
	s.KeysLive += o.KeysLive
	s.KeysBlocked += o.KeysBlocked
}
