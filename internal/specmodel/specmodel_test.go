package specmodel

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// TestRunMatchesFIFOFormula checks the simulation against SPEC.md's
// closed formulas (the model as it was before concurrency, priorities,
// queue bounds and deadlines: fifoSchedule) on the random cases those
// cover, with plain cancellations: the two must agree to the nanosecond.
func TestRunMatchesFIFOFormula(t *testing.T) {
	for seed := range 3000 {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		c := RandomCase(r, 3)
		for i := range c.Items {
			c.Items[i].PlainCancel = true
		}
		got, want := Schedule(c.Config, c.Items), fifoSchedule(c.Config, c.Items)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: item %d departs at %v, the formula says %v\nconfig %+v\nitems %+v\ngot  %v\nwant %v", seed, i, got[i], want[i], c.Config, c.Items, got, want)
			}
		}
	}
}

// fifoSchedule is the closed formula of SPEC.md for FIFO callers:
//
//	d_i = max(a_i, d_(i-1) + S, pause, earliest t at which, for every
//	      limit k, n_i more tokens fit beside the tokens in use at t)
//
// no departure coming before an earlier caller's departure or the
// cancellation of an earlier caller that was still waiting.
func fifoSchedule(cfg Config, items []Item) []time.Duration {
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
