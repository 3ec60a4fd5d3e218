package rxthrottle

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// aggregate is the Stats of one shard of a Keyed limiter kept as it goes,
// so Stats costs the same for a million keys as for one. The shard's
// buckets update it under their own locks, hence the atomics.
//
// Admissions, the hot path, are counted in the Keyed's stripes, one per
// processor (see stripes): two cores admitting callers of different keys
// write no common memory. The rest is counted here, in the shard: the
// queue gauges (each key's ups and downs in one place, so their sum is
// never negative), cancellations, and the admissions a give-back takes
// back. Their writers are callers that wait, which cost far more.
type aggregate struct {
	stripes stripes // the Keyed's (every shard has a copy); read on every admission
	_       [cacheLinePad]byte

	admitted    atomic.Uint64 // only admissions given back, subtracted
	cancelled   atomic.Uint64
	refused     atomic.Uint64
	waiting     atomic.Int64 // callers queued over the shard's keys
	keysWaiting atomic.Int64 // keys with at least one
}

// cacheLinePad keeps data written by different cores apart: two cache
// lines, since some processors fetch lines in pairs.
const cacheLinePad = 128

// admit counts one admission after a wait of d in the calling processor's
// stripe (a Keyed's key uses the stripe it cached instead: see keyState).
func (a *aggregate) admit(d time.Duration) { a.stripes.local().admit(d) }

// admit counts one admission after a wait of d in stripe s.
func (s *stripe) admit(d time.Duration) {
	s.admitted.Add(1)
	if d <= 0 {
		return
	}
	s.waited.Add(1)
	s.totalWait.Add(int64(d))
	for {
		m := s.maxWait.Load()
		if int64(d) <= m || s.maxWait.CompareAndSwap(m, int64(d)) {
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

// snapshot returns the shard's own counters; the stripes are summed apart.
func (a *aggregate) snapshot() Stats {
	return Stats{
		Admitted:    a.admitted.Load(),
		Cancelled:   a.cancelled.Load(),
		Refused:     a.refused.Load(),
		Queued:      int(a.waiting.Load()),
		KeysBlocked: int(a.keysWaiting.Load()),
	}
}

// stripes are a Keyed limiter's admission counters, split so that each
// processor (P) mostly writes a stripe of its own, on cache lines of its
// own: a counter every core increments would move between their caches on
// every admission and keep keys on different cores from scaling.
//
// Go does not tell a goroutine which P runs it; a sync.Pool does keep a
// value per P, so the pool holds each P's stripe number. The number is only
// a hint: should the pool drop it (a garbage collection) or hand it to
// another P, two Ps share a stripe for a while, which costs speed, never a
// count. The counters are summed by Stats.
type stripes struct {
	s    []stripe
	mask uint32
}

type stripe struct {
	admitted, waited   atomic.Uint64
	totalWait, maxWait atomic.Int64
	_                  [cacheLinePad - 32]byte
}

// stripeHints holds, per P, the number of the stripe it writes, as a uint8
// (boxed without allocating).
var (
	stripeHints sync.Pool
	nextStripe  atomic.Uint32
)

// newStripes returns stripes for twice the current GOMAXPROCS, so that Ps
// seldom share one even after their hints are dealt again.
func newStripes() stripes {
	n := 1
	for n < 2*runtime.GOMAXPROCS(0) && n < 256 {
		n *= 2
	}
	return stripes{s: make([]stripe, n), mask: uint32(n - 1)}
}

// local returns the stripe of the calling goroutine's P.
func (ss *stripes) local() *stripe {
	i, ok := stripeHints.Get().(uint8)
	if !ok {
		i = uint8(nextStripe.Add(1))
	}
	s := &ss.s[uint32(i)&ss.mask]
	//lint:ignore SA6002 a uint8 goes into an interface without allocating
	stripeHints.Put(i)
	return s
}

// sum adds the stripes into st.
func (ss *stripes) sum(st *Stats) {
	for i := range ss.s {
		s := &ss.s[i]
		st.Admitted += s.admitted.Load()
		st.Waited += s.waited.Load()
		st.TotalWait += time.Duration(s.totalWait.Load())
		st.MaxWait = max(st.MaxWait, time.Duration(s.maxWait.Load()))
	}
}

// add sums o into s, for the shards of a Keyed limiter.
func (s *Stats) add(o Stats) {
	s.Admitted += o.Admitted
	s.Waited += o.Waited
	s.Cancelled += o.Cancelled
	s.Refused += o.Refused
	s.Failed += o.Failed
	s.TotalWait += o.TotalWait
	s.MaxWait = max(s.MaxWait, o.MaxWait)
	s.Queued += o.Queued
	s.KeysLive += o.KeysLive
	s.KeysBlocked += o.KeysBlocked
}
