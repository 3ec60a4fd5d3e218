package rxthrottle

import "sort"

// A window whose largest N is above coarseAbove (a limit such as
// Per(1<<30, time.Second), written for "practically unlimited") would
// remember one completion, 8 bytes, per admission of its last window:
// hundreds of megabytes a second under free Waits. Such a window keeps
// coarse history instead: its ring holds only the newest coarseRing
// completions, and the older ones still inside a window are counted in
// runs, each a count of completions and the latest of their instants, a
// run spanning less than a grain, W/coarseRuns of the largest window. The
// memory is then bounded whatever the rate: 32 KiB of ring and at most
// coarseRuns+1 runs in a window.
//
// A completion counted in a run is remembered at the run's latest instant:
// up to a grain later than it was read, never earlier, which only makes
// the window stricter (SPEC.md, "On the real clock"). Completions at the
// same instant share a run exactly, and so do completions a grain or more
// apart, each in a run of its own (as on virtual time, whose instants are
// whole milliseconds): then the schedule is exact. A limit only looks as
// far back as its N, behind the held tokens and the caller's cost, so the
// runs matter only when a window really holds more than coarseRing
// completions that a limit can count: when such an N binds.
const (
	coarseAbove = 1 << 20 // the largest N remembered completion by completion
	coarseRing  = 1 << 12 // the ring's length with coarse history
	coarseRuns  = 1 << 12 // grains per largest window
)

// coarseHistory is the runs of a window with coarse history: the
// completions older than the ring's, in time order.
type coarseHistory struct {
	runs       []completionRun // circular; runs[head] is the oldest of size
	head, size int
	base       uint64 // completions counted before the oldest run
	pushed     uint64 // completions ever counted: the newest run's end
	grain      int64  // a run spans less than this
	horizon    int64  // the largest window: a run older is out of every one
	ringCap    int    // the window's ring length
	forced     bool   // kept whatever the limits (tests)
}

// completionRun is completions read from first to t, all counted at t;
// end is pushed after its last one.
type completionRun struct {
	first, t int64
	end      uint64
}

func newCoarse(largestW int64, ringCap int, runsPerW int64) *coarseHistory {
	c := &coarseHistory{ringCap: ringCap}
	c.setGrain(largestW, runsPerW)
	return c
}

// setGrain sets the span of the runs made from now on, and the horizon.
func (c *coarseHistory) setGrain(largestW, runsPerW int64) {
	c.grain, c.horizon = max(1, largestW/runsPerW), largestW
}

// total returns the number of completions in the runs.
func (c *coarseHistory) total() uint64 { return c.pushed - c.base }

// at returns the i-th run, 0 being the oldest.
func (c *coarseHistory) at(i int) *completionRun {
	j := c.head + i
	if j >= len(c.runs) {
		j -= len(c.runs)
	}
	return &c.runs[j]
}

// startOf returns the number of completions counted before run i.
func (c *coarseHistory) startOf(i int) uint64 {
	if i == 0 {
		return c.base
	}
	return c.at(i - 1).end
}

// add counts k completions at e, no earlier than every run's instant.
func (c *coarseHistory) add(e int64, k uint64) {
	c.pushed += k
	if c.size > 0 {
		if r := c.at(c.size - 1); e-r.first < c.grain {
			r.t, r.end = max(r.t, e), c.pushed
			return
		}
	}
	if c.size == len(c.runs) {
		c.relayout(max(2*len(c.runs), 16), c.size)
	}
	c.size++
	*c.at(c.size - 1) = completionRun{first: e, t: e, end: c.pushed}
}

// relayout moves the runs into a new slice of length n, oldest first,
// with a free place at index gap (c.size: none before the end).
func (c *coarseHistory) relayout(n, gap int) {
	runs := make([]completionRun, n)
	for i := range c.size {
		j := i
		if i >= gap {
			j++
		}
		runs[j] = *c.at(i)
	}
	c.runs, c.head = runs, 0
}

// insert counts one completion at e, which may be earlier than the newest
// run: in the run whose span holds it, or whose span a grain from its
// first instant may (counted at its t, never earlier than e), or in a run
// of its own, in its place.
func (c *coarseHistory) insert(e int64) {
	i := sort.Search(c.size, func(i int) bool { return c.at(i).t >= e })
	switch {
	case i == c.size:
		c.add(e, 1)
		return
	case c.at(i).first <= e:
		// In run i's span.
	case i > 0 && e-c.at(i-1).first < c.grain:
		i--
		c.at(i).t = e
	default:
		c.relayout(max(len(c.runs), c.size+1), i)
		c.size++
		*c.at(i) = completionRun{first: e, t: e, end: c.startOf(i)}
	}
	for j := i; j < c.size; j++ {
		c.at(j).end++
	}
	c.pushed++
}

// dropOldest forgets the oldest run and returns its instant.
func (c *coarseHistory) dropOldest() int64 {
	r := c.at(0)
	c.base = r.end
	c.head++
	if c.head == len(c.runs) {
		c.head = 0
	}
	c.size--
	return r.t
}

// reset forgets every run.
func (c *coarseHistory) reset() { c.base, c.head, c.size = c.pushed, 0, 0 }

// fromEnd returns the instant of the k-th most recent completion of the
// runs (k >= 1), and whether they hold that many.
func (c *coarseHistory) fromEnd(k uint64) (int64, bool) {
	if k > c.total() {
		return 0, false
	}
	a := c.pushed - k // completions counted after it: it is number a+1
	i := sort.Search(c.size, func(i int) bool { return c.at(i).end > a })
	return c.at(i).t, true
}

// inWindow returns how many of the runs' completions still hold a token of
// a limit of window w at now (t + w > now), at most limit.
func (c *coarseHistory) inWindow(now, w int64, limit uint64) uint64 {
	i := sort.Search(c.size, func(i int) bool { return addSat(c.at(i).t, w) > now })
	if i == c.size {
		return 0
	}
	return min(c.pushed-c.startOf(i), limit)
}

// clone returns a deep copy.
func (c *coarseHistory) clone() *coarseHistory {
	d := *c
	d.runs = append([]completionRun(nil), c.runs...)
	return &d
}

// windowExt is what a window keeps behind one pointer: rarely needed, and
// a Keyed's key must stay in 256 bytes.
type windowExt struct {
	// keepUntil is when the limits replaced by setLimits stop looking at
	// the history (keepW is the largest of their windows). It is here, not
	// in the window, so that a Bucket has room for Wait's budget
	// (wait_fastpath.go) and a Keyed's key stays in 256 bytes.
	keepUntil int64
	keepW     int64          // the largest window of the limits setLimits replaced
	coarse    *coarseHistory // coarse history, or nil
}

// extended returns w.ext, made if need be.
func (w *window) extended() *windowExt {
	if w.ext == nil {
		w.ext = new(windowExt)
	}
	return w.ext
}

// keepUntil returns when the limits replaced by setLimits stop looking at
// the history: 0 (no reading is earlier) until a SetLimit.
func (w *window) keepUntil() int64 {
	if w.ext == nil {
		return 0
	}
	return w.ext.keepUntil
}

// coarse returns w's coarse history, or nil.
func (w *window) coarse() *coarseHistory {
	if w.ext == nil {
		return nil
	}
	return w.ext.coarse
}
