// Package limitertest checks, through the rxthrottle.Limiter interface, that
// a limiter keeps SPEC.md's schedule: bursts, several limits, held tokens
// renewed on release, tokens given back, hold timeouts, weights, spacing,
// cancellation, Pause, SetLimit, Allow and bad input. Every limiter of
// rxthrottle runs it (the in-memory Bucket, a key of a Keyed, the Redis
// ones), so that swapping one for another changes nothing a caller sees.
// Like testing/fstest, import it only from _test.go files.
package limitertest

import (
	"context"

	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Setup is what Config.New must build a limiter for.
type Setup struct {
	// Limits are the limits, all in force at once: the first is the
	// constructor's, the others as rxthrottle.WithLimit.
	Limits []rxthrottle.Limit
	// HoldTimeout is the hold timeout (rxthrottle.WithHoldTimeout); 0
	// leaves the limiter's default.
	HoldTimeout time.Duration
	// Spacing is the minimum gap between departures (rxthrottle.WithSpacing).
	Spacing time.Duration
}

// Config describes the limiter under test.
type Config struct {
	// New returns a new limiter, with a state of its own, for s.
	New func(t *testing.T, s Setup) rxthrottle.Limiter
	// Virtual says the limiter reads the clock of the testing/synctest
	// bubble it is made in (time.Now): each check then runs in a bubble, and
	// every departure must equal SPEC's schedule to the nanosecond.
	// Otherwise the checks run on the real clock, with windows of Window,
	// and a departure may differ from the schedule by at most Slack.
	Virtual bool
	// Window is W on the real clock; 500ms if 0.
	Window time.Duration
	// Slack is how far from the schedule a departure may be on the real
	// clock; 100ms if 0 (a loaded CI machine running -race stalls
	// goroutines for tens of milliseconds).
	Slack time.Duration
}

func (c Config) window() time.Duration {
	switch {
	case c.Virtual:
		return 100 * time.Millisecond
	case c.Window > 0:
		return c.Window
	}
	return 500 * time.Millisecond
}

// run runs f as one check: in a synctest bubble for a virtual limiter.
func (c Config) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		if c.Virtual {
			synctest.Test(t, f)
			return
		}
		f(t)
	})
}

// Run runs every check against the limiters c.New makes.
func Run(t *testing.T, c Config) {
	w := c.window()
	tk := w / 10 // one tick
	per := rxthrottle.Per
	for _, s := range scenarios(w, tk) {
		c.run(t, s.name, func(t *testing.T) { c.checkSchedule(t, s) })
	}
	c.run(t, "costs out of range are errors at once", func(t *testing.T) {
		l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(3, w)}})
		ctx := context.Background()
		require.ErrorIs(t, l.WaitN(ctx, 0), rxthrottle.ErrInvalidCost)
		require.ErrorIs(t, l.WaitN(ctx, 4), rxthrottle.ErrInvalidCost)
		_, err := l.AcquireN(ctx, -1)
		require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
		_, err = l.AllowN(ctx, 4)
		require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
		ok, err := l.AllowN(ctx, 3)
		require.NoError(t, err)
		require.True(t, ok, "a bad cost took no token")
	})
	c.run(t, "Allow takes a free token and never waits", func(t *testing.T) {
		l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(2, w)}})
		ctx := context.Background()
		for i, want := range []bool{true, true, false} {
			ok, err := l.Allow(ctx)
			require.NoError(t, err)
			require.Equal(t, want, ok, "Allow #%d", i+1)
		}
	})
	c.run(t, "context: nil, ended, ending while waiting", func(t *testing.T) {
		l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(1, w)}})
		//lint:ignore SA1012 a nil context is what this checks
		require.Error(t, l.Wait(nil)) //nolint:staticcheck
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, l.Wait(ended), context.Canceled)
		require.NoError(t, l.Wait(context.Background()))
		short, cancel := context.WithTimeout(context.Background(), w/2)
		defer cancel()
		_, err := l.Acquire(short)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		start := time.Now()
		require.NoError(t, l.Wait(context.Background()))
		c.near(t, w/2, time.Since(start), "the cancelled Acquire took no token")
	})
	c.run(t, "Pause holds everyone back until its end", func(t *testing.T) {
		l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(5, w)}})
		start := time.Now()
		l.Pause(start.Add(3 * tk))
		l.Pause(start.Add(tk)) // never shortens a longer pause
		require.NoError(t, l.Wait(context.Background()))
		c.near(t, 3*tk, time.Since(start), "departure after Pause")
	})
	c.run(t, "SetLimit keeps the history", func(t *testing.T) {
		l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(2, w)}})
		ctx := context.Background()
		require.NoError(t, l.Wait(ctx))
		require.NoError(t, l.Wait(ctx))
		require.NoError(t, l.SetLimit(per(3, w)))
		require.Equal(t, []rxthrottle.Limit{per(3, w)}, l.Limits())
		ok, err := l.Allow(ctx)
		require.NoError(t, err)
		require.True(t, ok, "one more of 3")
		ok, err = l.Allow(ctx)
		require.NoError(t, err)
		require.False(t, ok, "3 of 3 used in this window")
		err = l.SetLimit(per(0, w))
		require.ErrorIs(t, err, rxthrottle.ErrInvalidLimit)
		require.Equal(t, []rxthrottle.Limit{per(3, w)}, l.Limits(), "a bad SetLimit changes nothing")
	})
	c.run(t, "Stats counts admissions", func(t *testing.T) {
		l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(5, w)}})
		ctx := context.Background()
		for range 3 {
			require.NoError(t, l.Wait(ctx))
		}
		tok, err := l.Acquire(ctx)
		require.NoError(t, err)
		tok.Release()
		require.EqualValues(t, 4, l.Stats().Admitted)
	})
	c.run(t, "many holders: at most N arrivals in any window", func(t *testing.T) {
		c.checkConcurrent(t, per(4, w))
	})
	if c.Virtual {
		c.run(t, "random cases match the model", func(t *testing.T) {
			for seed := range 40 {
				r := rand.New(rand.NewPCG(uint64(seed), 11))
				rc := specmodel.RandomCase(r, 3)
				if len(rc.Items) == 0 {
					continue
				}
				var s scenario
				s.name = fmt.Sprint("seed ", seed)
				s.cfg, s.items, s.acquire = rc.Config, rc.Items, rc.Acquire
				c.checkSchedule(t, s)
				time.Sleep(time.Hour) // every hold ends before the next case
			}
		})
	}
}

// near fails unless got is want, exactly on virtual time, within Slack on
// the real clock.
func (c Config) near(t *testing.T, want, got time.Duration, msg string) {
	t.Helper()
	if c.Virtual {
		require.Equal(t, want, got, msg)
		return
	}
	slack := c.Slack
	if slack == 0 {
		slack = 100 * time.Millisecond
	}
	require.InDelta(t, float64(want), float64(got), float64(slack), "%s: %v, want %v", msg, got, want)
}

// setup turns a model configuration into a Setup.
func setup(cfg specmodel.Config) Setup {
	s := Setup{HoldTimeout: cfg.HoldTimeout, Spacing: cfg.Spacing}
	for _, l := range cfg.Limits {
		s.Limits = append(s.Limits, rxthrottle.Per(l.N, l.Window))
	}
	return s
}

// checkSchedule runs the callers of s, each at its arrival, and compares
// every departure with the model's.
func (c Config) checkSchedule(t *testing.T, s scenario) {
	t.Helper()
	l := c.New(t, setup(s.cfg))
	want := specmodel.Schedule(s.cfg, s.items)
	got := make([]time.Duration, len(s.items))
	start := time.Now()
	var wg sync.WaitGroup
	for i, it := range s.items {
		time.Sleep(time.Until(start.Add(it.Arrive)))
		if !c.Virtual && i > 0 {
			// On the real clock, goroutines started together reach the
			// limiter in any order: stagger them so they arrive in order.
			time.Sleep(2 * time.Millisecond)
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if it.Cancel >= 0 {
			ctx, cancel = context.WithDeadline(ctx, start.Add(it.Cancel))
		}
		wg.Go(func() {
			defer cancel()
			var tok rxthrottle.Token
			var err error
			if n := max(it.Cost, 1); s.acquire[i] {
				tok, err = l.AcquireN(ctx, n)
			} else {
				err = l.WaitN(ctx, n)
			}
			if err != nil {
				assert.ErrorIs(t, err, context.DeadlineExceeded, "caller %d", i)
				got[i] = -1
				return
			}
			got[i] = time.Since(start)
			if !s.acquire[i] || it.Hold < 0 {
				return
			}
			time.Sleep(it.Hold)
			if it.Unused {
				tok.Cancel()
			} else {
				tok.Release()
			}
		})
		if c.Virtual {
			synctest.Wait()
		}
	}
	wg.Wait()
	if c.Virtual {
		require.Equal(t, want, got, "%s: departures", s.name)
		return
	}
	// On the real clock, callers started a few milliseconds apart may still
	// reach the limiter in another order on a loaded machine: callers alike
	// (same cost, hold and cancellation) are interchangeable, so their
	// departures are compared in sorted order.
	type class struct {
		cost, acquire int
		hold          time.Duration
		unused, ends  bool
	}
	wants, gots := map[class][]time.Duration{}, map[class][]time.Duration{}
	var order []class
	for i, it := range s.items {
		k := class{max(it.Cost, 1), 0, it.Hold, it.Unused, it.Cancel >= 0}
		if s.acquire[i] {
			k.acquire = 1
		}
		if _, seen := wants[k]; !seen {
			order = append(order, k)
		}
		wants[k] = append(wants[k], want[i])
		gots[k] = append(gots[k], got[i])
	}
	for _, k := range order {
		w, g := wants[k], gots[k]
		slices.Sort(w)
		slices.Sort(g)
		for i := range w {
			if w[i] < 0 || g[i] < 0 {
				require.Equal(t, w[i] < 0, g[i] < 0, "%s: callers %+v cancelled: %v, want %v", s.name, k, g, w)
				continue
			}
			c.near(t, w[i], g[i], fmt.Sprintf("%s: callers %+v: %v, want %v", s.name, k, g, w))
		}
	}
}

// checkConcurrent has many goroutines hold tokens for random times; an
// arrival drawn between each Acquire's return and its Release must never
// put more than N in a window.
func (c Config) checkConcurrent(t *testing.T, limit rxthrottle.Limit) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{limit}})
	var mu sync.Mutex
	var arrivals []time.Duration
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 5))
			tok, err := l.Acquire(context.Background())
			if !assert.NoError(t, err) {
				return
			}
			departed := time.Since(start)
			time.Sleep(time.Duration(r.IntN(int(limit.Window / 2))))
			released := time.Since(start)
			tok.Release()
			mu.Lock()
			arrivals = append(arrivals, departed+time.Duration(r.Int64N(int64(released-departed)+1)))
			mu.Unlock()
		})
	}
	wg.Wait()
	require.LessOrEqual(t, specmodel.MaxInWindow(arrivals, nil, limit.Window), limit.N)
}

// scenario is one named schedule check.
type scenario struct {
	name    string
	cfg     specmodel.Config
	items   []specmodel.Item
	acquire []bool
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
