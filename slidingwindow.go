package rxthrottle

import (
	"math"
	"sort"
	"time"
)

// window is the time-pure heart of every in-memory limiter: it remembers the
// most recent emission times and answers, for one or several limits at once,
// when the next token is free. It never reads a clock; callers pass the
// times in. It is not safe for concurrent use: its owner locks.
//
// Times are kept as int64 nanoseconds since base, taken with time.Time.Sub,
// so the monotonic clock reading is used when there is one (a wall-clock
// step cannot shorten a window) and each remembered emission costs 8 bytes.
//
// One ring serves every limit: the ring holds the last max(N_k) emissions,
// and limit k looks back N_k entries. The ring grows on demand, doubling up
// to max(N_k), so Per(1<<30, ...) costs nothing until tokens are used.
type window struct {
	base   time.Time
	limits []Limit // immutable once set; replaced whole by setLimits
	maxN   int

	ring []int64 // circular; ring[head] is the oldest of size entries
	head int
	size int

	pauseUntil int64 // no emission before this offset; math.MinInt64 if none
}

// never is the offset returned when no emission can be planned until some
// held token is committed or given back.
const never = math.MaxInt64

func newWindow(base time.Time, limits []Limit) window {
	w := window{base: base, pauseUntil: math.MinInt64}
	w.setLimits(limits)
	return w
}

// offset converts t to the window's int64 nanoseconds.
func (w *window) offset(t time.Time) int64 { return int64(t.Sub(w.base)) }

// time converts an offset back to a time.Time.
func (w *window) time(off int64) time.Time { return w.base.Add(time.Duration(off)) }

// setLimits replaces the limits and keeps as much history as the new limits
// can use: the newest max(N_k) emissions. The limits must be valid.
func (w *window) setLimits(limits []Limit) {
	w.limits = limits
	w.maxN = 0
	for _, l := range limits {
		w.maxN = max(w.maxN, l.N)
	}
	if w.size > w.maxN || len(w.ring) > w.maxN {
		w.regrow(min(w.size, w.maxN), min(len(w.ring), w.maxN))
	}
}

// regrow copies the newest keep entries, oldest first, into a new ring of
// capacity c.
func (w *window) regrow(keep, c int) {
	ring := make([]int64, c)
	for i := range keep {
		ring[i] = w.at(w.size - keep + i)
	}
	w.ring, w.head, w.size = ring, 0, keep
}

// at returns the i-th remembered emission, 0 being the oldest.
func (w *window) at(i int) int64 {
	j := w.head + i
	if j >= len(w.ring) {
		j -= len(w.ring)
	}
	return w.ring[j]
}

// fromEnd returns the k-th most recent emission (k >= 1) and whether there
// were that many.
func (w *window) fromEnd(k int) (int64, bool) {
	if k > w.size {
		return 0, false
	}
	return w.at(w.size - k), true
}

// last returns the most recent emission, or math.MinInt64 if there was none.
func (w *window) last() int64 {
	if e, ok := w.fromEnd(1); ok {
		return e
	}
	return math.MinInt64
}

// freeAt returns the earliest offset at which one more item may be emitted
// when held tokens are granted but not yet emitted (they count against every
// limit, their renewal not yet known), or never if held already exhausts a
// limit. It is SPEC's max(e_(i-1), e_(i-N_k) + W_k over k, pause); the
// caller takes the max with the arrival time ("now").
func (w *window) freeAt(held int) int64 { return w.freeAfter(nil, held) }

// freeAfter is freeAt as if the planned emissions in plan (sorted, none
// earlier than the last remembered one) had already happened. Reservation
// uses it to project when a queued caller will go.
func (w *window) freeAfter(plan []int64, held int) int64 {
	at := w.pauseUntil
	if len(plan) > 0 {
		at = max(at, plan[len(plan)-1])
	} else {
		at = max(at, w.last())
	}
	for _, l := range w.limits {
		need := l.N - held
		if need <= 0 {
			return never
		}
		var e int64
		switch {
		case need <= len(plan):
			e = plan[len(plan)-need]
		default:
			var ok bool
			if e, ok = w.fromEnd(need - len(plan)); !ok {
				continue
			}
		}
		at = max(at, addSat(e, int64(l.Window)))
	}
	return at
}

// project returns the offset at which the caller with ahead live callers
// before it will be emitted if nothing changes: every caller going at the
// earliest instant the limits allow, held tokens emitted at now.
func (w *window) project(now int64, held, ahead int) int64 {
	plan := make([]int64, 0, held+ahead+1)
	for range held {
		plan = append(plan, now)
	}
	for range ahead + 1 {
		plan = append(plan, max(now, w.freeAfter(plan, 0)))
	}
	return plan[len(plan)-1]
}

// free returns how many more items could be emitted at now with held tokens
// out: the smallest number of free tokens over the limits.
func (w *window) free(now int64, held int) int {
	free := math.MaxInt
	for _, l := range w.limits {
		// The newest min(size, N) entries are sorted: binary-search how many
		// of them still hold their token at now (e + W > now).
		k := min(w.size, l.N)
		inWindow := k - sort.Search(k, func(i int) bool {
			return addSat(w.at(w.size-k+i), int64(l.Window)) > now
		})
		free = min(free, max(0, l.N-held-inWindow))
	}
	if now < w.pauseUntil {
		return 0
	}
	return free
}

// record remembers an emission at off. An offset earlier than the last one
// (a clock set backwards) is taken as the last one, so the ring stays sorted.
func (w *window) record(off int64) {
	off = max(off, w.last())
	if w.size < len(w.ring) {
		j := w.head + w.size
		if j >= len(w.ring) {
			j -= len(w.ring)
		}
		w.ring[j] = off
		w.size++
		return
	}
	if len(w.ring) < w.maxN {
		w.regrow(w.size, min(max(2*len(w.ring), 1), w.maxN))
		w.ring[w.size] = off
		w.size++
		return
	}
	// Full: overwrite the oldest, which no limit can look back to any more.
	w.ring[w.head] = off
	w.head++
	if w.head == len(w.ring) {
		w.head = 0
	}
}

// pause raises the floor below which nothing is emitted. It never lowers it.
func (w *window) pause(until int64) { w.pauseUntil = max(w.pauseUntil, until) }

// idleAt returns the offset from which the window is indistinguishable from
// a new one: every token renewed and any pause over.
func (w *window) idleAt() int64 {
	at := w.pauseUntil
	for _, l := range w.limits {
		at = max(at, addSat(w.last(), int64(l.Window)))
	}
	return at
}

// addSat returns a+b, saturated to the int64 range (b >= 0).
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
