package specmodel

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// use is the tokens of one departure: held tokens are in use from the
// departure until end, then done of them until end + W (n for a Release, 0
// for tokens given back, what the call used for a ReleaseN, a debt
// included).
type use struct {
	held, done int
	end        time.Duration
}

// inUse returns how many tokens of u are in use at x for a limit of window
// w.
func (u use) inUse(x, w time.Duration) int {
	switch {
	case x < u.end:
		return u.held
	case x < sat(u.end, w):
		return u.done
	}
	return 0
}

// sim is the state of Run's simulation.
type sim struct {
	cfg   Config
	items []Item
	out   []Outcome
	uses  []use
	holds []time.Duration // the ends of the holds, for the concurrency cap
	last  time.Duration   // the latest departure, math.MinInt64 if none
	queue []int           // waiting callers, in arrival order
	fair  fairState
}

// Run simulates SPEC.md over items and returns how each fared. Time moves
// from event to event; at each instant t, in this order:
//
//  1. the callers waiting go while the one that goes next can go at t
//     (the highest priority first, then the tenant of the smallest virtual
//     finish, then the earliest arrival: see fair.go; the next one blocks
//     everyone behind it, of any priority);
//  2. the waiting callers whose context ends at t are withdrawn (a grant at
//     the very instant of a cancellation wins), and 1. runs again;
//  3. the callers arriving at t arrive one by one, in index order: one goes
//     at once if it would go before every caller waiting (nobody of a
//     higher priority waits, nor of its priority and tenant, and its
//     virtual finish is below every other tenant's of its priority) and it
//     can go at t; else it is refused if its deadline comes no later than the
//     earliest instant it could possibly go, or if the queue bound is
//     reached; else it waits.
//
// A caller "can go at t" when t is no earlier than the pause and the last
// departure plus the spacing, every limit has its tokens free at t (a
// token is in use from its departure until its hold ends, then until the
// end plus the window if it completed, and no longer if it was given back;
// a debt is tokens completed at the release), and for a holder, fewer than
// Concurrency holds are open at t. The earliest instant a caller could
// possibly go (for deadlines) is the same with every hold open at its
// arrival taken as completed then, and no concurrency cap.
func Run(cfg Config, items []Item) []Outcome {
	s := &sim{cfg: cfg, items: items, out: make([]Outcome, len(items)), last: math.MinInt64}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
		s.out[i].Depart = -1
	}
	sort.SliceStable(order, func(a, b int) bool { return items[order[a]].Arrive < items[order[b]].Arrive })
	t := time.Duration(math.MinInt64)
	next := 0
	for next < len(order) || len(s.queue) > 0 {
		tn := Never
		if next < len(order) {
			tn = items[order[next]].Arrive
		}
		if h, ok := s.head(); ok {
			tn = min(tn, s.canGoFrom(h, t))
		}
		for _, q := range s.queue {
			if c := items[q].Cancel; c >= 0 {
				tn = min(tn, c)
			}
		}
		if tn == Never {
			for _, q := range s.queue {
				s.out[q].Result = Stuck
			}
			break
		}
		if tn <= t {
			panic(fmt.Sprintf("specmodel: no progress at %v", t))
		}
		t = tn
		s.dispatch(t)
		kept, gone := s.queue[:0], []int(nil)
		for _, q := range s.queue {
			if c := items[q].Cancel; c >= 0 && c <= t {
				s.out[q].Result = Cancelled
				gone = append(gone, q)
				continue
			}
			kept = append(kept, q)
		}
		s.queue = kept
		for _, q := range gone {
			s.left(items[q].Priority)
		}
		s.dispatch(t)
		for next < len(order) && items[order[next]].Arrive == t {
			s.arrive(order[next], t)
			next++
		}
	}
	return s.out
}

// dispatch lets the waiting callers go at t while the next one can.
func (s *sim) dispatch(t time.Duration) {
	for {
		h, ok := s.head()
		if !ok || s.canGoFrom(h, t) > t {
			return
		}
		s.served(h, true)
		for j, q := range s.queue {
			if q == h {
				s.queue = append(s.queue[:j], s.queue[j+1:]...)
				break
			}
		}
		s.left(s.items[h].Priority)
		s.depart(h, t)
	}
}

// arrive is caller i's arrival at t.
func (s *sim) arrive(i int, t time.Duration) {
	it := s.items[i]
	if it.Cancel >= 0 && it.Cancel <= t {
		s.out[i].Result = Ended
		return
	}
	if s.leads(i) && s.canGoFrom(i, t) <= t {
		s.served(i, false)
		s.depart(i, t)
		return
	}
	if it.Cancel >= 0 && !it.PlainCancel && it.Cancel <= s.earliest(i, t) {
		s.out[i].Result = DeadlineRefused
		return
	}
	if s.cfg.QueueBounded && len(s.queue) >= s.cfg.MaxQueue {
		s.out[i].Result = QueueFull
		return
	}
	s.queue = append(s.queue, i)
	s.queued(i)
}

// cost returns item i's cost.
func (s *sim) cost(i int) int { return max(s.items[i].Cost, 1) }

// holder reports whether item i holds its token.
func (s *sim) holder(i int) bool {
	it := s.items[i]
	return it.Acquire || it.Hold != 0 || it.Unused || it.ReleaseN
}

// floor returns the earliest departure the pause and the spacing allow
// from t.
func (s *sim) floor(t time.Duration) time.Duration {
	d := max(t, s.cfg.Pause)
	if s.last != math.MinInt64 {
		d = max(d, sat(s.last, s.cfg.Spacing))
	}
	return d
}

// canGoFrom returns the earliest instant from t at which caller i can go,
// if nobody else departs before.
func (s *sim) canGoFrom(i int, t time.Duration) time.Duration {
	d := s.floor(t)
	for _, l := range s.cfg.Limits {
		d = max(d, roomAt(s.uses, d, l, l.N-s.cost(i)))
	}
	if k := s.cfg.Concurrency; k > 0 && s.holder(i) {
		var ends []time.Duration
		for _, e := range s.holds {
			if e > t {
				ends = append(ends, e)
			}
		}
		if len(ends) >= k {
			sort.Slice(ends, func(a, b int) bool { return ends[a] > ends[b] })
			d = max(d, ends[k-1])
		}
	}
	return d
}

// earliest returns the earliest instant caller i, arriving at t, could
// possibly go: as if every caller ahead gave up and every hold open at t
// were released at t.
func (s *sim) earliest(i int, t time.Duration) time.Duration {
	uses := make([]use, len(s.uses))
	for j, u := range s.uses {
		if u.end > t {
			u = use{held: u.held, done: u.held, end: t}
		}
		uses[j] = u
	}
	d := s.floor(t)
	for _, l := range s.cfg.Limits {
		d = max(d, roomAt(uses, d, l, l.N-s.cost(i)))
	}
	return d
}

// roomAt returns the earliest instant from t at which at most room tokens
// of uses are in use for limit l, or Never. (The count can rise at a
// release that reports a debt; a caller that found room before goes.)
func roomAt(uses []use, t time.Duration, l Limit, room int) time.Duration {
	xs := []time.Duration{t}
	for _, u := range uses {
		for _, x := range []time.Duration{u.end, sat(u.end, l.Window)} {
			if x > t {
				xs = append(xs, x)
			}
		}
	}
	sort.Slice(xs, func(a, b int) bool { return xs[a] < xs[b] })
	for _, x := range xs {
		n := 0
		for _, u := range uses {
			n += u.inUse(x, l.Window)
		}
		if n <= room {
			return x
		}
	}
	return Never
}

// depart makes caller i depart at t and records its tokens and hold.
func (s *sim) depart(i int, t time.Duration) {
	it, n := s.items[i], s.cost(i)
	s.out[i].Result, s.out[i].Depart = Departed, t
	s.last = t
	if !s.holder(i) {
		s.uses = append(s.uses, use{held: n, done: n, end: t})
		return
	}
	timeout := Never
	if s.cfg.HoldTimeout > 0 {
		timeout = sat(t, s.cfg.HoldTimeout)
	}
	if it.Hold < 0 || sat(t, it.Hold) >= timeout {
		s.out[i].TimedOut = true
		s.uses = append(s.uses, use{held: n, done: n, end: timeout})
		s.holds = append(s.holds, timeout)
		return
	}
	end := t + it.Hold
	s.holds = append(s.holds, end)
	switch {
	case it.Unused || it.ReleaseN && it.Used == 0:
		s.out[i].GivenBack = true
		s.uses = append(s.uses, use{held: n, end: end})
	case it.ReleaseN:
		s.uses = append(s.uses, use{held: n, done: it.Used, end: end}) // a debt beyond n
	default:
		s.uses = append(s.uses, use{held: n, done: n, end: end})
	}
}
