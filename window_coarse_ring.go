package rxthrottle

import "math"

// The window's side of coarse history (window_coarse.go): moving
// completions between the ring and the runs.

// takeOneCoarse is takeOneLocked's decision for a window of one limit with
// coarse history c (w's), written out as the common case of a full ring
// is: if the limit has a token free at now, it records the completion at
// now and returns true; otherwise it changes nothing and returns false.
// The ring's oldest, which the new completion replaces, joins the newest
// run (add's common case) with the run found once.
func (w *window) takeOneCoarse(c *coarseHistory, now int64) bool {
	l := w.limits[0]
	var e int64
	var ok bool
	switch k := l.N - w.size; {
	case k <= 0:
		e, ok = w.at(-k), true
	case uint64(k) <= c.pushed-c.base:
		e, ok = c.fromEnd(uint64(k))
	default:
		e, ok = w.dropped, w.dropped != math.MinInt64
	}
	if ok && addSat(e, int64(l.Window)) > now {
		return false
	}
	if w.size != c.ringCap || len(w.ring) != c.ringCap || now < w.ring[w.newest()] {
		w.record(now) // a ring still growing, or a clock set back
		return true
	}
	w.replaceOldestCoarse(c, now)
	return true
}

// replaceOldestCoarse records a completion at now, no earlier than the
// newest, in a full ring of coarse history c (w's): the ring's oldest,
// which it replaces, joins the newest run (add's common case) with the
// run found once.
func (w *window) replaceOldestCoarse(c *coarseHistory, now int64) {
	ring, head := w.ring, w.head
	v := ring[head]
	if c.size == 0 {
		c.add(v, 1)
	} else {
		j := c.head + c.size - 1
		if j >= len(c.runs) {
			j -= len(c.runs)
		}
		if r := &c.runs[j]; v-r.first < c.grain {
			c.pushed++
			r.t, r.end = max(r.t, v), c.pushed
		} else {
			c.add(v, 1)
		}
	}
	if addSat(c.runs[c.head].t, c.horizon) <= now {
		w.pruneRuns(now)
	}
	ring[head] = now
	if head++; head == len(ring) {
		head = 0
	}
	w.head = head
}

// replaceOldestCoarseN is replaceOldestCoarse(c, v) for each v of vs in
// turn, readings sorted and no earlier than the newest, in a full ring of
// coarse history c (w's), with the same ring, runs and dropped at the end
// (closeLocked's case: up to a budget of departures at once). A step prunes
// the runs only if the oldest run's instant is out of the horizon at its
// reading; the steps before the first reading at or past that (the oldest
// run's instant only grows as the ring's oldest join the newest run) prune
// nothing, so their oldest join the runs at once (addRingOldest) and their
// readings are copied into the ring; that step is taken alone.
func (w *window) replaceOldestCoarseN(c *coarseHistory, vs []int64) {
	for len(vs) > 0 {
		if c.size == 0 {
			w.replaceOldestCoarse(c, vs[0])
			vs = vs[1:]
			continue
		}
		m := min(len(vs), len(w.ring)) // a batch reads each slot before it writes it
		if lim := addSat(c.runs[c.head].t, c.horizon); vs[m-1] >= lim {
			m = 0
			for vs[m] < lim {
				m++
			}
		}
		if m == 0 {
			w.replaceOldestCoarse(c, vs[0]) // it may prune
			vs = vs[1:]
			continue
		}
		w.addRingOldest(c, m)
		head := w.head
		copy(w.ring, vs[copy(w.ring[head:], vs[:m]):m])
		if head += m; head >= len(w.ring) {
			head -= len(w.ring)
		}
		w.head = head
		vs = vs[m:]
	}
}

// addRingOldest counts the ring's m oldest completions (m <= size) into
// the runs as c.add(w.at(i), 1) would for i from 0 to m-1, no run being
// pruned meanwhile: those a grain from the newest run's first instant join
// it at once (the ring is sorted, so they come first). It leaves the ring
// as it is. Requires c to be w's coarse history, with a run at least.
func (w *window) addRingOldest(c *coarseHistory, m int) {
	for i := 0; i < m; {
		r := c.at(c.size - 1)
		j := m // the first of i..m-1 that does not join r
		if w.at(m-1)-r.first >= c.grain {
			j = i
			for w.at(j)-r.first < c.grain {
				j++
			}
		}
		if j == i {
			c.add(w.at(i), 1) // a run of its own
			i++
			continue
		}
		c.pushed += uint64(j - i)
		r.t, r.end = max(r.t, w.at(j-1)), c.pushed
		i = j
	}
}

// evictOldest moves the ring's oldest completion into the runs, before e,
// the completion that takes its place, is written there. Requires
// w.coarse.
func (w *window) evictOldest(e int64) {
	c := w.coarse()
	c.add(w.ring[w.head], 1)
	if addSat(c.at(0).t, c.horizon) <= e {
		w.pruneRuns(e)
	}
}

// pruneRuns forgets the runs nobody can look at any more at e: out of every
// window, and of any a replaced limit still keeps. Requires w.coarse.
func (w *window) pruneRuns(e int64) {
	c := w.coarse()
	for c.size > 0 {
		t := c.at(0).t
		if addSat(t, c.horizon) > e || w.needed(t, e) {
			break
		}
		w.dropped = max(w.dropped, c.dropOldest())
	}
}

// setCoarse gives w coarse history if its largest N needs it, or gives it
// back (the runs' completions, each at its run's instant, into the ring)
// if not, and fits the ring to the runs. It runs in setLimits, with w.maxN
// set.
func (w *window) setCoarse() {
	c := w.coarse()
	switch {
	case c == nil && w.maxN > coarseAbove:
		c = newCoarse(w.largestW(), coarseRing, coarseRuns)
		w.extended().coarse = c
	case c != nil && w.maxN <= coarseAbove && !c.forced:
		w.leaveCoarse()
		return
	case c == nil:
		return
	default:
		c.setGrain(w.largestW(), coarseRuns)
	}
	if w.size > c.ringCap || len(w.ring) > c.ringCap {
		keep := min(w.size, c.ringCap)
		for i := range w.size - keep {
			c.add(w.at(i), 1)
		}
		ring := make([]int64, c.ringCap)
		for i := range keep {
			ring[i] = w.at(w.size - keep + i)
		}
		w.ring, w.head, w.size = ring, 0, keep
	}
}

// leaveCoarse puts the newest completions of the runs, up to maxN in all,
// back into the ring, each at its run's instant, and forgets the rest.
func (w *window) leaveCoarse() {
	c := w.coarse()
	w.ext.coarse = nil
	k := min(c.total(), uint64(max(w.maxN-w.size, 0)))
	if k < c.total() {
		if e, ok := c.fromEnd(k + 1); ok {
			w.dropped = max(w.dropped, e)
		}
	}
	ring := make([]int64, int(k)+w.size)
	for i := range int(k) {
		ring[i], _ = c.fromEnd(k - uint64(i))
	}
	for i := range w.size {
		ring[int(k)+i] = w.at(i)
	}
	w.ring, w.head, w.size = ring, 0, len(ring)
}

// recordN remembers k completions at off, a clock reading, as k calls of
// record would, in time bounded by the ring's length with coarse history.
func (w *window) recordN(off int64, k int) {
	c := w.coarse()
	if c == nil || k <= c.ringCap {
		for range k {
			w.record(off)
		}
		return
	}
	off = max(off, w.last())
	for i := range w.size {
		c.add(w.at(i), 1)
	}
	c.add(off, uint64(k-c.ringCap))
	if len(w.ring) != c.ringCap {
		w.ring = make([]int64, c.ringCap)
	}
	for i := range w.ring {
		w.ring[i] = off
	}
	w.head, w.size = 0, c.ringCap
	w.pruneRuns(off)
}
