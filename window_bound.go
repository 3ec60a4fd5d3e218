package rxthrottle

import "math"

// earliest returns a lower bound of the instant a caller needing n tokens,
// arriving at now, can depart (SPEC.md, "Deadlines"): the instant the
// limits, the pause and the spacing allow if every caller ahead gave up and
// the held tokens were all released at now, so that each held token renews
// at now + W. It is never later than the true departure, whatever happens
// next. n must be from 1 to the smallest N.
func (w *window) earliest(now int64, held, n int) int64 {
	at := max(now, w.pauseUntil)
	if w.spacing > 0 && w.lastDeparture != math.MinInt64 {
		at = max(at, addSat(w.lastDeparture, w.spacing))
	}
	for _, l := range w.limits {
		// The caller's last token is free once the need-th most recent
		// completion has renewed, the held ones (completed at now) the most
		// recent of all.
		need := l.N - n + 1
		if need <= held {
			at = max(at, addSat(now, int64(l.Window)))
			continue
		}
		if e, ok := w.fromEnd(need - held); ok {
			at = max(at, addSat(e, int64(l.Window)))
		}
	}
	return at
}

// needed reports whether a completion at e, older than the newest maxN that
// the limits in force look back to, may still matter at now: it is inside
// the window of a replaced limit that may come back.
func (w *window) needed(e, now int64) bool {
	if now >= w.keepUntil() {
		return false
	}
	var keepW int64 // 0 until a SetLimit sets ext
	if w.ext != nil {
		keepW = w.ext.keepW
	}
	return addSat(e, keepW) > now
}

// recordDebt records used completions at now, a clock reading: the tokens
// of a release that used more than it held count as departures at the
// release (SPEC.md, "Cost known after the call"). Only the newest maxN
// completions can matter to the limits in force; beyond them it records
// maxN and takes all the history before as completed at now too, which is
// never earlier than the truth, so the cost of a huge debt is bounded.
func (w *window) recordDebt(now int64, used int) {
	if used > w.maxN {
		w.dropped = max(w.dropped, max(now, w.last()))
		w.head, w.size = 0, 0
		if c := w.coarse(); c != nil {
			c.reset()
		}
		used = w.maxN
	}
	w.recordN(now, used)
}

// overwriteOldest records a completion at now, a clock reading, in the
// common case of a full ring that needs no more history (push's last case),
// and reports whether it did; otherwise record must. It is record's fast
// path (no longer inlined since keepUntil moved to the window's ext: cost
// 90 > 80; checking ext != nil instead broke the coarse twin test).
func (w *window) overwriteOldest(now int64) bool {
	if w.size != len(w.ring) || w.size < w.maxN || now < w.keepUntil() || now < w.ring[w.newest()] {
		return false
	}
	w.dropped = max(w.dropped, w.ring[w.head])
	w.ring[w.head] = now
	if w.head++; w.head == len(w.ring) {
		w.head = 0
	}
	return true
}

// newest returns the index in ring of the newest completion of a full ring:
// the one before the oldest.
func (w *window) newest() int {
	if w.head == 0 {
		return len(w.ring) - 1
	}
	return w.head - 1
}

// pause raises the floor below which nothing departs. It never lowers it.
func (w *window) pause(until int64) { w.pauseUntil = max(w.pauseUntil, until) }

// idleAt returns the offset from which the window is indistinguishable from
// a new one: every token renewed, any pause over, the spacing passed.
func (w *window) idleAt() int64 {
	at := w.pauseUntil
	if w.spacing > 0 && w.lastDeparture != math.MinInt64 {
		at = max(at, addSat(w.lastDeparture, w.spacing))
	}
	return max(at, addSat(w.last(), w.largestW()))
}

// smallestN returns the smallest N of the limits: the largest cost that can
// ever be served. (Derived rather than kept: a Keyed keeps a window per key.)
func (w *window) smallestN() int {
	n := math.MaxInt
	for _, l := range w.limits {
		n = min(n, l.N)
	}
	return n
}

// largestW returns the largest window of the limits, or 0 if none is set.
func (w *window) largestW() int64 {
	var d int64
	for _, l := range w.limits {
		d = max(d, int64(l.Window))
	}
	return d
}

// clone returns a deep copy, for projections that must not touch w.
func (w *window) clone() window {
	c := *w
	c.ring = make([]int64, len(w.ring))
	copy(c.ring, w.ring)
	if w.ext != nil {
		x := *w.ext
		if x.coarse != nil {
			x.coarse = x.coarse.clone()
		}
		c.ext = &x
	}
	return c
}

// recordSorted records completions at vs, clock readings in order (the
// departures of Wait's budget, wait_fastpath.go), as takeOneLocked would one
// by one. In the common case of a full ring that needs no more history
// (overwriteOldest's), they replace the len(vs) oldest at once; in a full
// ring of coarse history whose oldest the limits may look back to (always,
// but for a forced one, as tests make, of an N up to the ring's length),
// as takeOneCoarse would, the ring's oldest joining the runs in batches
// (replaceOldestCoarseN). Otherwise each as takeOneLocked's general case.
func (w *window) recordSorted(vs []int64) {
	n := len(vs)
	if w.coarse() == nil && w.size == len(w.ring) && w.size >= w.maxN && n <= w.size &&
		vs[0] >= w.keepUntil() && vs[0] >= w.ring[w.newest()] {
		w.dropped = max(w.dropped, w.at(n-1))
		copy(w.ring, vs[copy(w.ring[w.head:], vs):])
		if w.head += n; w.head >= len(w.ring) {
			w.head -= len(w.ring)
		}
		return
	}
	if c := w.coarse(); c != nil && w.size == c.ringCap && len(w.ring) == c.ringCap && vs[0] >= w.ring[w.newest()] &&
		(w.size < w.maxN || len(w.limits) == 1 && w.size > w.maxN) {
		// takeOneCoarse's case, len(vs) times. (A ring of the one limit's N
		// is takeOneLocked's common case; of several, overwriteOldest's.)
		w.replaceOldestCoarseN(c, vs)
		return
	}
	for _, v := range vs {
		if !w.overwriteOldest(v) {
			w.record(v)
		}
	}
}
