package rxthrottle

import (
	"math"
	"sort"
)

// window is the time-pure heart of every in-memory limiter: it remembers the
// most recent completion times (when a token's work was done, which starts
// its renewal) and answers, for one or several limits at once, when the next
// token is free. It never reads a clock; callers pass the times in. It is not
// safe for concurrent use: its owner locks.
//
// Times are int64 nanoseconds since a base its owner keeps (a Bucket's
// clock base, hooks.base), taken with time.Time.Sub, so the monotonic clock
// reading is used when there is one (a wall-clock step cannot shorten a
// window) and each remembered completion costs 8 bytes.
//
// One ring serves every limit: the ring holds at least the last max(N_k)
// completions, sorted, and limit k looks back N_k entries. The ring grows on
// demand, so a large N costs nothing until tokens are used; an N above
// coarseAbove (Per(1<<30, ...)) keeps a ring of coarseRing and counts the
// older completions in runs (window_coarse.go), so that its memory does not
// grow with the admission rate. It keeps
// more than max(N_k) entries only while they are inside a window that a
// limit in force, or a limit replaced less than its window ago, may still
// look at (see setLimits): lowering a limit and raising it again never loses
// the history it needs.
//
// The fields an admission writes come first, so that they share a cache
// line with the Bucket's lock, which comes just before the window (see
// keyEntry: that line is the one a call on a Keyed's key writes).
type window struct {
	head          int
	size          int
	lastDeparture int64 // math.MinInt64 if none
	// dropped is the newest completion dropped from the ring, or
	// math.MinInt64. A limit that looks back further than the ring (one
	// raised by SetLimit after the history it would need was dropped) takes
	// the missing completions to be at dropped: never earlier than they
	// were, so its window cannot overflow. It may then wait a little longer
	// than the exact schedule, never less.
	dropped int64

	ring   []int64 // circular; ring[head] is the oldest of size entries
	limits []Limit // immutable once set; replaced whole by setLimits
	maxN   int

	pauseUntil int64 // no departure before this offset; math.MinInt64 if none
	spacing    int64 // minimum gap between departures (WithSpacing)

	// ext is what the window keeps apart, so that a Keyed's key stays in
	// 256 bytes: nil until a SetLimit or coarse history needs it.
	ext *windowExt
}

// never is the offset returned when no departure can be planned until some
// held token is released or given back.
const never = math.MaxInt64

func newWindow(limits []Limit) window {
	w := window{pauseUntil: math.MinInt64, lastDeparture: math.MinInt64, dropped: math.MinInt64}
	w.setLimits(limits, math.MinInt64)
	return w
}

// setLimits replaces the limits at now. The limits must be valid. No
// completion is dropped that a new limit can look back to, nor one that a
// replaced limit still had inside its window: should that limit come back
// (SetLimit down, then up again), the schedule goes on as if it had always
// been in force.
func (w *window) setLimits(limits []Limit, now int64) {
	if old := w.largestW(); old > 0 {
		x := w.extended()
		if now >= x.keepUntil {
			x.keepW = 0
		}
		x.keepW = max(x.keepW, old)
		x.keepUntil = max(x.keepUntil, addSat(now, old))
	}
	w.limits = limits
	w.maxN = 0
	for _, l := range limits {
		w.maxN = max(w.maxN, l.N)
	}
	if w.setCoarse(); w.coarse() != nil {
		return // a ring of its own length, the runs for the rest
	}
	// Drop what nobody can look at any more, and give back a ring much
	// larger than what is left.
	keep := w.size
	for keep > w.maxN && !w.needed(w.at(w.size-keep), now) {
		keep--
	}
	if keep < w.size || len(w.ring) > 2*max(keep, w.maxN) {
		w.regrow(keep, min(len(w.ring), max(keep, w.maxN)))
	}
}

// regrow copies the newest keep entries, oldest first, into a new ring of
// capacity c >= keep.
func (w *window) regrow(keep, c int) {
	if keep < w.size {
		w.dropped = max(w.dropped, w.at(w.size-keep-1))
	}
	ring := make([]int64, c)
	for i := range keep {
		ring[i] = w.at(w.size - keep + i)
	}
	w.ring, w.head, w.size = ring, 0, keep
}

// at returns the i-th remembered completion, 0 being the oldest.
func (w *window) at(i int) int64 {
	j := w.head + i
	if j >= len(w.ring) {
		j -= len(w.ring)
	}
	return w.ring[j]
}

// set overwrites the i-th remembered completion.
func (w *window) set(i int, e int64) {
	j := w.head + i
	if j >= len(w.ring) {
		j -= len(w.ring)
	}
	w.ring[j] = e
}

// fromEnd returns the k-th most recent completion (k >= 1) and whether there
// were that many; beyond the ring, dropped stands for the ones it lost.
func (w *window) fromEnd(k int) (int64, bool) {
	if k > w.size {
		return w.beyondRing(k)
	}
	return w.at(w.size - k), true
}

// beyondRing is fromEnd for a k beyond the ring: in the runs of coarse
// history, else dropped. (Apart, so that fromEnd is inlined.)
func (w *window) beyondRing(k int) (int64, bool) {
	if c := w.coarse(); c != nil {
		if e, ok := c.fromEnd(uint64(k - w.size)); ok {
			return e, true
		}
	}
	return w.dropped, w.dropped != math.MinInt64
}

// last returns the most recent completion, or math.MinInt64 if there was
// none (dropped, then). The runs of coarse history are empty whenever the
// ring is.
func (w *window) last() int64 {
	if w.size > 0 {
		return w.at(w.size - 1)
	}
	return w.dropped
}

// freeAt returns the earliest offset at which a caller needing n tokens may
// depart while held tokens are out (they count against every limit, their
// renewal not yet known), or never if held and n already exhaust a limit.
// It is SPEC's max(d_(i-1) + S, c*_(i-N_k) + W_k over k, pause) for n items
// arriving together; the caller takes the max with its arrival ("now").
func (w *window) freeAt(held, n int) int64 {
	at := w.pauseUntil
	if w.spacing > 0 && w.lastDeparture != math.MinInt64 {
		at = max(at, addSat(w.lastDeparture, w.spacing))
	}
	for _, l := range w.limits {
		// Of the tokens of this limit, held+n-1 are taken by the holders and
		// by this caller's other n-1; the last one is free once the
		// need-th most recent completion has renewed.
		need := l.N - held - n + 1
		if need <= 0 {
			return never
		}
		if e, ok := w.fromEnd(need); ok {
			at = max(at, addSat(e, int64(l.Window)))
		}
	}
	return at
}

// free returns how many more tokens could be taken at now with held tokens
// out: the smallest number of free tokens over the limits.
func (w *window) free(now int64, held int) int {
	if now < w.pauseUntil {
		return 0
	}
	free := math.MaxInt
	for _, l := range w.limits {
		// The newest min(size, N) entries are sorted: binary-search how many
		// of them still hold their token at now (c + W > now).
		k := min(w.size, l.N)
		inWindow := k - sort.Search(k, func(i int) bool {
			return addSat(w.at(w.size-k+i), int64(l.Window)) > now
		})
		if c := w.coarse(); c != nil && k < l.N {
			more := uint64(l.N - k)
			inWindow += int(c.inWindow(now, int64(l.Window), more))
			k += int(min(c.total(), more))
		}
		if k < l.N && w.dropped != math.MinInt64 && addSat(w.dropped, int64(l.Window)) > now {
			inWindow = l.N // lost history that may still be in the window
		}
		free = min(free, max(0, l.N-held-inWindow))
	}
	return free
}

// depart notes a departure at off, for spacing.
func (w *window) depart(off int64) { w.lastDeparture = max(w.lastDeparture, off) }

// record remembers a completion at off, a clock reading. A reading earlier
// than the last one (a clock set backwards) is taken as the last one, so
// the ring stays sorted and no token renews earlier than it should.
func (w *window) record(off int64) {
	w.push(max(off, w.last()))
}

// recordAt remembers a completion at off, which may be earlier than the
// newest one (a hold that timed out at its deadline, noticed later): it is
// inserted in its sorted place.
func (w *window) recordAt(off int64) {
	if c := w.coarse(); c != nil && w.size == c.ringCap && off < w.at(0) {
		c.insert(off) // older than the ring: into the runs
		return
	}
	e := max(off, w.last())
	if w.size > 0 && off < w.at(0) && w.size == len(w.ring) && len(w.ring) >= w.maxN && !w.needed(w.at(0), e) {
		// Older than all the ring keeps, and no room: drop it. (Asked at
		// e, as push would: asked at off, a replaced limit's keep could
		// make push overwrite the oldest, newer than off, and off take
		// its place.)
		w.dropped = max(w.dropped, off)
		return
	}
	w.push(e)
	for i := w.size - 1; i > 0 && w.at(i-1) > off; i-- {
		w.set(i, w.at(i-1))
		w.set(i-1, off)
	}
}

// push appends e, which is no earlier than the newest entry.
func (w *window) push(e int64) {
	if w.size == len(w.ring) {
		switch {
		case w.coarse() != nil && len(w.ring) >= w.coarse().ringCap:
			w.evictOldest(e)
			w.ring[w.head] = e
			w.head++
			if w.head == len(w.ring) {
				w.head = 0
			}
			return
		case w.coarse() != nil:
			w.regrow(w.size, min(max(2*len(w.ring), 1), w.coarse().ringCap))
		case len(w.ring) < w.maxN:
			w.regrow(w.size, min(max(2*len(w.ring), 1), w.maxN))
		case w.needed(w.at(0), e):
			w.regrow(w.size, 2*len(w.ring))
		default:
			// Full: overwrite the oldest, which nobody can look back to.
			w.dropped = max(w.dropped, w.ring[w.head])
			w.ring[w.head] = e
			w.head++
			if w.head == len(w.ring) {
				w.head = 0
			}
			return
		}
	}
	w.set(w.size, e)
	w.size++
}

// addSat returns a+b, saturated to the int64 range (b >= 0).
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
