// Package specmodel is the reference model of SPEC.md that the property
// tests of every limiter compare against, to the nanosecond: one limit or
// several, held tokens renewed on completion, hold timeouts, tokens given
// back unused or released with the tokens a call used (ReleaseN, debts
// included), weights, spacing, a pause, cancellation, deadlines decided at
// arrival, a cap on holds open (concurrency), priorities, fair shares of
// tenants and a queue bound. It is deliberately naive (an event-by-event
// simulation that recomputes everything at every step) so that it is easy
// to check against the text of SPEC.md.
package specmodel

import (
	"math"
	"sort"
	"time"
)

// Limit is N tokens per Window.
type Limit struct {
	N      int
	Window time.Duration
}

// Item is one caller, times relative to the start.
type Item struct {
	// Arrive is when the caller reaches the limiter.
	Arrive time.Duration
	// Cost is the number of tokens it takes (0 means 1).
	Cost int
	// Cancel is when its context ends if it has not departed by then
	// (strictly before); a negative Cancel never comes. It is the context's
	// deadline, which the limiter sees at arrival (SPEC.md, "Deadlines"),
	// unless PlainCancel.
	Cancel time.Duration
	// PlainCancel makes Cancel a cancellation without a deadline (a cancel
	// function called then): it is never refused early.
	PlainCancel bool
	// Acquire says the caller holds its token (Acquire) rather than Wait:
	// it counts against Config.Concurrency while its hold is open. An item
	// with a Hold, Unused or ReleaseN holds too.
	Acquire bool
	// Hold is how long after its departure the caller ends its hold: it
	// completes (Release), with Unused gives the tokens back (Cancel), or
	// with ReleaseN releases them as having used Used tokens. 0 is a
	// plain Wait: the completion is the departure. A negative Hold never
	// ends: the hold timeout ends it.
	Hold     time.Duration
	Unused   bool
	ReleaseN bool
	Used     int
	// Priority is the caller's (WithPriority): higher goes first.
	Priority int
	// Tenant and Weight are the caller's (WithTenant; SPEC.md, "Fair
	// shares"): "" is the default tenant, and a Weight that is not a
	// positive finite number is 1.
	Tenant string
	Weight float64
}

// Config is the limiter's configuration.
type Config struct {
	Limits      []Limit
	Spacing     time.Duration
	HoldTimeout time.Duration // ends a hold at departure + HoldTimeout
	Pause       time.Duration // no departure before this (0: none)
	// Concurrency caps the holds open at once (0: no cap).
	Concurrency int
	// MaxQueue bounds the callers waiting at once, if QueueBounded.
	MaxQueue     int
	QueueBounded bool
}

// Never is the end of a hold that never ends (no timeout).
const Never = time.Duration(math.MaxInt64)

// Schedule returns the departure of each item by SPEC.md, or -1 for an item
// that did not depart (cancelled, or refused by its deadline or the queue
// bound): Run's departures.
func Schedule(cfg Config, items []Item) []time.Duration {
	out := make([]time.Duration, len(items))
	for i, o := range Run(cfg, items) {
		out[i] = o.Depart
	}
	return out
}

// MaxInWindow returns the largest number of tokens whose times fall in one
// half-open window [t, t+w); times[i] < 0 are ignored, costs[i] weighs
// times[i] (nil: 1 each).
func MaxInWindow(times []time.Duration, costs []int, w time.Duration) int {
	type ev struct {
		t time.Duration
		n int
	}
	evs := make([]ev, 0, len(times))
	for i, t := range times {
		if t < 0 {
			continue
		}
		n := 1
		if costs != nil {
			n = max(costs[i], 1)
		}
		evs = append(evs, ev{t, n})
	}
	sort.Slice(evs, func(a, b int) bool { return evs[a].t < evs[b].t })
	best, sum, lo := 0, 0, 0
	for hi := range evs {
		sum += evs[hi].n
		for evs[hi].t-evs[lo].t >= w {
			sum -= evs[lo].n
			lo++
		}
		best = max(best, sum)
	}
	return best
}

func sat(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Case is a random case: a configuration, callers, and for each caller
// whether it uses Acquire (a held token, ended by its Hold) or Wait.
type Case struct {
	Config  Config
	Items   []Item
	Acquire []bool
}

// RandomCase draws a case from r with up to maxLimits limits. Arrivals,
// holds, windows, spacing and the hold timeout are whole milliseconds, so
// many events coincide and many departures fall exactly on a renewal;
// cancellations fall on half milliseconds, so a cancellation never races a
// grant.
func RandomCase(r interface{ IntN(int) int }, maxLimits int) Case {
	var c Case
	ms := time.Millisecond
	c.Config.Limits = make([]Limit, 1+r.IntN(maxLimits))
	minN := math.MaxInt
	for i := range c.Config.Limits {
		c.Config.Limits[i] = Limit{N: 1 + r.IntN(6), Window: time.Duration(1+r.IntN(20)) * ms}
		minN = min(minN, c.Config.Limits[i].N)
	}
	if r.IntN(3) == 0 {
		c.Config.Spacing = time.Duration(r.IntN(5)) * ms
	}
	c.Config.HoldTimeout = time.Duration(5+r.IntN(40)) * ms
	var t time.Duration
	for range r.IntN(30) {
		if r.IntN(3) > 0 {
			t += time.Duration(r.IntN(8)) * ms
		}
		it := Item{Arrive: t, Cancel: -1, Cost: 1}
		if r.IntN(4) == 0 {
			it.Cost = 1 + r.IntN(minN)
		}
		if r.IntN(6) == 0 {
			it.Cancel = t + time.Duration(r.IntN(30))*ms + ms/2
		}
		acq := r.IntN(4) > 0
		if acq {
			switch r.IntN(8) {
			case 0:
				it.Hold = -1 // never released: the hold timeout ends it
			case 1, 2:
				it.Hold = time.Duration(r.IntN(30)) * ms
				it.Unused = true
			default:
				it.Hold = time.Duration(r.IntN(50)) * ms
			}
		}
		it.Acquire = acq
		c.Items = append(c.Items, it)
		c.Acquire = append(c.Acquire, acq)
	}
	return c
}

// Features selects what RandomMeteredCase draws beyond RandomCase's.
type Features struct {
	Concurrency bool // a cap on holds open
	Priorities  bool // callers of priorities -1, 0 and 1
	QueueBound  bool // a bound of 0 to 3 waiters
	Deadlines   bool // some cancellations are context deadlines
	ReleaseN    bool // some holds end with ReleaseN, of less, as much or more (a debt)
	Tenants     bool // callers of up to three tenants, of weights 1 to 3
}

// RandomMeteredCase draws a case as RandomCase does, then mixes in the
// features of f: a concurrency cap, priorities, a queue bound, deadlines
// (without Deadlines, every cancellation is a plain one) and ReleaseN. The
// times stay on RandomCase's grid (cancellations on half milliseconds,
// everything else on whole ones), except the releases that report a debt,
// a few microseconds off it.
func RandomMeteredCase(r interface{ IntN(int) int }, maxLimits int, f Features) Case {
	c := RandomCase(r, maxLimits)
	minN := math.MaxInt
	for _, l := range c.Config.Limits {
		minN = min(minN, l.N)
	}
	if f.Concurrency && r.IntN(3) > 0 {
		c.Config.Concurrency = 1 + r.IntN(3)
	}
	if f.QueueBound && r.IntN(2) == 0 {
		c.Config.QueueBounded, c.Config.MaxQueue = true, r.IntN(4)
	}
	var tenants []string
	if f.Tenants {
		tenants = []string{"a", "b", "c"}[:1+r.IntN(3)]
	}
	for i := range c.Items {
		it := &c.Items[i]
		if f.Tenants && r.IntN(4) > 0 {
			k := r.IntN(len(tenants))
			it.Tenant, it.Weight = tenants[k], float64(1+k)
		}
		it.PlainCancel = !f.Deadlines || r.IntN(3) == 0
		if f.Priorities && r.IntN(2) == 0 {
			it.Priority = r.IntN(3) - 1
		}
		if f.ReleaseN && it.Acquire && it.Hold >= 0 && !it.Unused && r.IntN(2) == 0 {
			it.ReleaseN, it.Used = true, r.IntN(2*minN+3)
			if it.Used > max(it.Cost, 1) {
				// A debt makes tokens busy at the release: a grant due at
				// that very instant would go or not by which of the two
				// goroutines runs first. Off the grid, it never coincides.
				it.Hold += time.Duration(1+r.IntN(997)) * time.Microsecond
			}
		}
	}
	return c
}
