package rxthrottle

import (
	"math/rand/v2"
	"sort"
	"time"
)

// This file holds the reference model of SPEC.md that the property tests of
// every in-memory limiter compare against.

// specItem is one arrival in a generated case, times relative to the start.
type specItem struct {
	arrive time.Duration
	cancel time.Duration // < 0: never cancelled
	isErr  bool          // operator only: an error item, which takes no token
}

// specSchedule returns the emission time of each item by SPEC.md's formula,
// e_i = max(a_i, e_(i-1), max_k(e_(i-N_k) + W_k)), where cancelled items
// (cancel < their emission) and error items take no token; it returns -1 for
// a cancelled item. An error item is emitted at max(a_i, e_(i-1)).
func specSchedule(limits []Limit, items []specItem) []time.Duration {
	out := make([]time.Duration, len(items))
	var emitted []time.Duration // emissions that took a token
	last := time.Duration(-1 << 63)
	for i, it := range items {
		e := max(it.arrive, last)
		if !it.isErr {
			for _, l := range limits {
				if len(emitted) >= l.N {
					e = max(e, emitted[len(emitted)-l.N]+l.Window)
				}
			}
		}
		if it.cancel >= 0 && it.cancel < e {
			out[i] = -1
			continue
		}
		out[i] = e
		last = e
		if !it.isErr {
			emitted = append(emitted, e)
		}
	}
	return out
}

// maxInWindow returns the largest number of times that fall in one half-open
// window [t, t+w) (times need not be sorted; negative ones are ignored).
func maxInWindow(times []time.Duration, w time.Duration) int {
	ts := make([]time.Duration, 0, len(times))
	for _, t := range times {
		if t >= 0 {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	best, lo := 0, 0
	for hi := range ts {
		for ts[hi]-ts[lo] >= w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// randomCase draws limits and arrivals. Times are whole milliseconds so that
// many arrivals coincide and many emissions fall exactly on a renewal;
// cancellations fall on half milliseconds, so a cancellation never races an
// emission at the same instant.
func randomCase(r *rand.Rand, maxLimits int, withErrors bool) ([]Limit, []specItem) {
	limits := make([]Limit, 1+r.IntN(maxLimits))
	for i := range limits {
		limits[i] = Per(1+r.IntN(6), time.Duration(1+r.IntN(20))*time.Millisecond)
	}
	items := make([]specItem, r.IntN(40))
	var t time.Duration
	for i := range items {
		if r.IntN(3) > 0 { // a third of the items arrive with the previous one
			t += time.Duration(r.IntN(8)) * time.Millisecond
		}
		items[i] = specItem{arrive: t, cancel: -1}
		if r.IntN(6) == 0 {
			items[i].cancel = t + time.Duration(r.IntN(30))*time.Millisecond + time.Millisecond/2
		}
		if withErrors && r.IntN(8) == 0 {
			items[i].isErr = true
			items[i].cancel = -1
		}
	}
	return limits, items
}
