// Package specmodel is the reference model of SPEC.md that the property
// tests of every limiter compare against, to the nanosecond: one limit or
// several, held tokens renewed on completion, hold timeouts, tokens given
// back unused, weights, spacing and cancellation. It is deliberately naive
// (it recomputes everything for every item) so that it is easy to check
// against the text of SPEC.md.
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
	// Cancel is when its wait is cancelled if it has not departed by then
	// (strictly before); a negative Cancel never comes.
	Cancel time.Duration
	// Hold is how long after its departure the caller ends its hold: it
	// completes (Release), or with Unused gives the tokens back (Cancel).
	// 0 is a plain Wait: the completion is the departure. A negative Hold
	// never ends: the hold timeout ends it.
	Hold   time.Duration
	Unused bool
}

// Config is the limiter's configuration.
type Config struct {
	Limits      []Limit
	Spacing     time.Duration
	HoldTimeout time.Duration // ends a hold at departure + HoldTimeout
	Pause       time.Duration // no departure before this (0: none)
}

// Never is the end of a hold that never ends (no timeout).
const Never = time.Duration(math.MaxInt64)

// Schedule returns the departure of each item by SPEC.md, or -1 for an item
// cancelled before it departed:
//
//	d_i = max(a_i, d_(i-1) + S, pause, earliest t at which, for every
//	      limit k, n_i more tokens fit beside the tokens in use at t)
//
// and no departure comes before an earlier caller's departure or the
// cancellation of an earlier caller that was still waiting (FIFO),
// where a token in use at t is one departed before and either not yet
// ended (held), or completed at c with c + W_k > t; a token given back
// unused at g is in use only before g. A hold ends at departure + Hold, or,
// if that is not earlier than departure + HoldTimeout, completes at
// departure + HoldTimeout: a Release after the timeout changes nothing.
func Schedule(cfg Config, items []Item) []time.Duration {
	type token struct {
		n         int
		completed time.Duration // renewal starts: in use until +W
		givenBack time.Duration // in use until then (no renewal); Never if completed
	}
	out := make([]time.Duration, len(items))
	var used []token
	last := time.Duration(math.MinInt64)  // the latest departure
	floor := time.Duration(math.MinInt64) // FIFO: no departure before it
	for i, it := range items {
		n := max(it.Cost, 1)
		d := max(it.Arrive, cfg.Pause, floor)
		if last != math.MinInt64 {
			d = max(d, last+cfg.Spacing)
		}
		for _, l := range cfg.Limits {
			// The instants at which the tokens in use become free for this
			// limit, latest first: the caller may go once the ones still in
			// use at d leave room for n.
			type free struct {
				at time.Duration
				n  int
			}
			frees := make([]free, 0, len(used))
			for _, u := range used {
				at := u.givenBack
				if at == Never {
					at = sat(u.completed, l.Window)
				}
				frees = append(frees, free{at, u.n})
			}
			sort.Slice(frees, func(a, b int) bool { return frees[a].at > frees[b].at })
			inUse := 0
			for _, f := range frees {
				inUse += f.n
				if inUse > l.N-n {
					d = max(d, f.at)
					break
				}
			}
		}
		if it.Cancel >= 0 && it.Cancel < d {
			// It takes no token, but the callers queued behind it could
			// not overtake it while it waited (with unit costs, they
			// could not have gone before it anyway).
			out[i] = -1
			floor = max(floor, it.Cancel)
			continue
		}
		out[i] = d
		last, floor = d, d
		tok := token{n: n, completed: d, givenBack: Never}
		end := Never
		if it.Hold >= 0 {
			end = sat(d, it.Hold)
		}
		if cfg.HoldTimeout > 0 && end >= sat(d, cfg.HoldTimeout) {
			tok.completed = sat(d, cfg.HoldTimeout)
		} else if it.Unused {
			tok.givenBack = end
		} else {
			tok.completed = end
		}
		used = append(used, tok)
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
		c.Items = append(c.Items, it)
		c.Acquire = append(c.Acquire, acq)
	}
	return c
}
