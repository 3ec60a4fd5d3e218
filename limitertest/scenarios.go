package limitertest

import (
	"time"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// scenario is one named schedule check.
type scenario struct {
	name    string
	cfg     specmodel.Config
	items   []specmodel.Item
	acquire []bool
	// virtualOnly: compared with the model on virtual time only, where
	// its arrivals cannot be reordered (see runMetering).
	virtualOnly bool
}

// scenarios are the schedule checks, in windows of w and ticks of tk.
func scenarios(w, tk time.Duration) []scenario {
	lim := func(n int, win time.Duration) specmodel.Limit { return specmodel.Limit{N: n, Window: win} }
	wait := func(at time.Duration) specmodel.Item { return specmodel.Item{Arrive: at, Cancel: -1} }
	hold := func(at, h time.Duration, unused bool) specmodel.Item {
		return specmodel.Item{Arrive: at, Cancel: -1, Hold: h, Unused: unused}
	}
	return []scenario{{
		name:  "a burst of N goes at once, the next one a window later",
		cfg:   specmodel.Config{Limits: []specmodel.Limit{lim(3, w)}},
		items: []specmodel.Item{wait(0), wait(0), wait(0), wait(0)}, acquire: make([]bool, 4),
	}, {
		name:  "several limits at once",
		cfg:   specmodel.Config{Limits: []specmodel.Limit{lim(2, w), lim(3, 3*w)}},
		items: []specmodel.Item{wait(0), wait(0), wait(0), wait(0)}, acquire: make([]bool, 4),
	}, {
		name:    "a held token renews a window after its Release",
		cfg:     specmodel.Config{Limits: []specmodel.Limit{lim(1, w)}},
		items:   []specmodel.Item{hold(0, 5*tk, false), wait(tk)},
		acquire: []bool{true, false},
	}, {
		name:    "a token given back unused is free at once",
		cfg:     specmodel.Config{Limits: []specmodel.Limit{lim(1, w)}},
		items:   []specmodel.Item{hold(0, 3*tk, true), wait(tk)},
		acquire: []bool{true, false},
	}, {
		name:    "a token never released renews after the hold timeout",
		cfg:     specmodel.Config{Limits: []specmodel.Limit{lim(1, w)}, HoldTimeout: 2 * w},
		items:   []specmodel.Item{hold(0, -1, false), wait(tk)},
		acquire: []bool{true, false},
	}, {
		name: "weights: n tokens at once, in FIFO order",
		cfg:  specmodel.Config{Limits: []specmodel.Limit{lim(5, w)}},
		items: []specmodel.Item{
			{Arrive: 0, Cancel: -1, Cost: 3}, {Arrive: 0, Cancel: -1, Cost: 3}, {Arrive: 0, Cancel: -1, Cost: 1},
		},
		acquire: make([]bool, 3),
	}, {
		name:    "spacing between departures",
		cfg:     specmodel.Config{Limits: []specmodel.Limit{lim(5, w)}, Spacing: 2 * tk},
		items:   []specmodel.Item{wait(0), wait(0), wait(0)},
		acquire: make([]bool, 3),
	}, {
		// The caller after the cancelled one arrives once it has cancelled:
		// a shared store keeps the times it has already handed out (moving
		// them would mean telling other processes), so only a caller that
		// comes later is sure to see the token given back. The in-memory
		// limiters also move the callers already waiting (their own tests
		// check it).
		name: "a cancelled wait takes no token",
		cfg:  specmodel.Config{Limits: []specmodel.Limit{lim(1, w)}},
		items: []specmodel.Item{
			wait(0), {Arrive: 0, Cancel: 5*tk + tk/2}, wait(6 * tk),
		},
		acquire: make([]bool, 3),
	}}
}
