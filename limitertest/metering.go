package limitertest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runMetering runs the checks of the optional rules the limiter claims, in
// windows of w and ticks of tk.
func (c Config) runMetering(t *testing.T, w, tk time.Duration) {
	for _, s := range meteringScenarios(c.Claims, w, tk) {
		if s.virtualOnly && !c.Virtual {
			continue
		}
		c.run(t, s.name, func(t *testing.T) { c.checkSchedule(t, s) })
	}
	per := rxthrottle.Per
	if c.Claims.Priorities {
		c.run(t, "a priority on an ended context is its error, at once", func(t *testing.T) {
			l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(1, w)}})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			require.ErrorIs(t, l.Wait(rxthrottle.WithPriority(ctx, 5)), context.Canceled)
			requireAllow(t, l, true, "the refused caller took no token")
		})
	}
	if c.Claims.ReleaseN {
		c.run(t, "ReleaseN: bad and late calls", func(t *testing.T) {
			l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(3, w)}})
			ctx := context.Background()
			tok, err := l.AcquireN(ctx, 2)
			require.NoError(t, err)
			require.Error(t, tok.ReleaseN(-1), "a negative usage")
			require.NoError(t, tok.ReleaseN(1))
			require.ErrorIs(t, tok.ReleaseN(1), rxthrottle.ErrTokenEnded, "ReleaseN after ReleaseN")
			tok, err = l.Acquire(ctx)
			require.NoError(t, err)
			tok.Release()
			require.ErrorIs(t, tok.ReleaseN(5), rxthrottle.ErrTokenEnded, "ReleaseN after Release")
			require.NoError(t, rxthrottle.Token{}.ReleaseN(3), "the zero Token")
			requireAllow(t, l, true, "one of 3 used by ReleaseN(1), one by the Release: one is free")
			requireAllow(t, l, false, "and no more: the late ReleaseN recorded nothing")
		})
		c.run(t, "ReleaseN: a debt delays the callers after it", func(t *testing.T) {
			l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(4, w)}})
			ctx := context.Background()
			tok, err := l.AcquireN(ctx, 2)
			require.NoError(t, err)
			// No later than the release, at which the debt is counted.
			released := time.Now()
			require.NoError(t, tok.ReleaseN(9)) // 2 used and a debt of 7: the window is full
			ok, err := l.Allow(ctx)
			require.NoError(t, err)
			if late := time.Since(released); late < w {
				require.False(t, ok, "a debt beyond N leaves no token free for a window after the release")
			} else {
				t.Logf("late on the real clock: Allow came %v after the release, the debt had renewed", late)
			}
			require.NoError(t, l.Wait(ctx))
			c.near(t, w, time.Since(released), "the first Wait after the debt goes a window after the release")
		})
		c.run(t, "ReleaseN: many holders, debts among them: at most N granted tokens arrive in any window", func(t *testing.T) {
			c.checkConcurrentUsage(t, per(4, w))
		})
	}
	if c.Claims.QueueBound {
		c.run(t, "queue bound: refusals are counted and consume nothing", func(t *testing.T) {
			l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(1, w)}, MaxQueue: 0, QueueBounded: true})
			ctx := context.Background()
			require.NoError(t, l.Wait(ctx))
			err := l.Wait(ctx)
			require.ErrorIs(t, err, rxthrottle.ErrQueueFull)
			require.False(t, errors.Is(err, context.DeadlineExceeded))
			require.EqualValues(t, 1, l.Stats().Refused)
			start := time.Now()
			_, err = l.Acquire(ctx)
			require.ErrorIs(t, err, rxthrottle.ErrQueueFull)
			c.near(t, 0, time.Since(start), "refused at once")
		})
	}
}

// meteringScenarios are the schedule checks of the rules claimed.
func meteringScenarios(cl Claims, w, tk time.Duration) []scenario {
	var out []scenario
	for _, m := range []struct {
		claimed bool
		build   func(w, tk time.Duration) scenario
	}{
		{cl.Concurrency, concurrencyScenario},
		{cl.Priorities, priorityScenario},
		{cl.FairShares, fairShareScenario},
		{cl.QueueBound, queueBoundScenario},
		{cl.Deadlines, deadlineScenario},
		{cl.ReleaseN, releaseNScenario},
	} {
		if m.claimed {
			out = append(out, m.build(w, tk))
		}
	}
	return out
}

// limitOf is the model's limit of n per win.
func limitOf(n int, win time.Duration) specmodel.Limit { return specmodel.Limit{N: n, Window: win} }

// waitAt is a caller of Wait arriving at at.
func waitAt(at time.Duration) specmodel.Item { return specmodel.Item{Arrive: at, Cancel: -1} }

// holdAt is a caller of Acquire arriving at at that holds its token for h.
func holdAt(at, h time.Duration) specmodel.Item {
	return specmodel.Item{Arrive: at, Cancel: -1, Hold: h, Acquire: true}
}

func concurrencyScenario(w, tk time.Duration) scenario {
	return scenario{
		name: "concurrency: at most k holds open, a released one frees its place at once",
		cfg:  specmodel.Config{Limits: []specmodel.Limit{limitOf(10, w)}, Concurrency: 2},
		items: []specmodel.Item{
			holdAt(0, 3*tk), holdAt(0, 5*tk), holdAt(0, tk), waitAt(tk), holdAt(2*tk, tk),
		},
		acquire: []bool{true, true, true, false, true},
	}
}

func priorityScenario(w, tk time.Duration) scenario {
	high := waitAt(2 * tk)
	high.Priority = 1
	low := waitAt(tk)
	low.Priority = -1
	return scenario{
		name:    "priorities: the higher goes first, then arrival order",
		cfg:     specmodel.Config{Limits: []specmodel.Limit{limitOf(1, w)}},
		items:   []specmodel.Item{waitAt(0), low, waitAt(tk), high},
		acquire: make([]bool, 4),
	}
}

func fairShareScenario(w, tk time.Duration) scenario {
	tenant := func(at time.Duration, key string, weight float64) specmodel.Item {
		it := waitAt(at)
		it.Tenant, it.Weight = key, weight
		return it
	}
	return scenario{
		name: "fair shares: a tenant's share of the waiting callers' tokens, by weight",
		cfg:  specmodel.Config{Limits: []specmodel.Limit{limitOf(1, w)}},
		items: []specmodel.Item{
			tenant(0, "a", 1), tenant(0, "a", 1), tenant(0, "a", 1), tenant(0, "a", 1),
			tenant(tk, "b", 2), tenant(tk, "b", 2), tenant(tk, "b", 2), tenant(2*tk, "c", 1),
		},
		acquire: make([]bool, 8),
	}
}

func queueBoundScenario(w, tk time.Duration) scenario {
	return scenario{
		name:    "queue bound: a caller that would wait beyond it is refused",
		cfg:     specmodel.Config{Limits: []specmodel.Limit{limitOf(1, w)}, MaxQueue: 1, QueueBounded: true},
		items:   []specmodel.Item{waitAt(0), waitAt(tk), waitAt(2 * tk), waitAt(w + tk)},
		acquire: make([]bool, 4),
	}
}

func deadlineScenario(w, tk time.Duration) scenario {
	return scenario{
		name: "deadlines: refused at arrival if before the earliest departure, else waits",
		cfg:  specmodel.Config{Limits: []specmodel.Limit{limitOf(1, w)}},
		items: []specmodel.Item{
			holdAt(0, 2*tk),
			{Arrive: tk, Cancel: w + tk/2},        // a held token ahead: could go at tk + w
			{Arrive: tk, Cancel: w + 2*tk + tk/2}, // waits, and goes at 2tk + w
		},
		acquire: []bool{true, false, false},
	}
}

func releaseNScenario(w, tk time.Duration) scenario {
	used := func(at, h time.Duration, cost, n int) specmodel.Item {
		return specmodel.Item{Arrive: at, Cancel: -1, Hold: h, Acquire: true, Cost: cost, ReleaseN: true, Used: n}
	}
	return scenario{
		name: "ReleaseN: what was not used comes back at once, a debt delays",
		cfg:  specmodel.Config{Limits: []specmodel.Limit{limitOf(4, w)}},
		items: []specmodel.Item{
			used(0, 2*tk, 4, 1), // 3 back at 2tk
			{Arrive: tk, Cancel: -1, Cost: 3},
			used(w+3*tk, tk, 1, 9), // a debt of 8, more than N
			waitAt(w + 5*tk),
		},
		acquire: []bool{true, false, true, false},
		// On the real clock the last caller may reach the limiter before
		// the debt's ReleaseN (a loaded machine delays it past a
		// tick) and go at once: the checks above assert there what
		// must hold, that a debt delays the callers after it and
		// never lets granted tokens exceed N in a window.
		virtualOnly: true,
	}
}

// checkConcurrentUsage has many goroutines hold 1 or 2 tokens for random
// times and release them with ReleaseN of 0 to 4, debts among them. Each
// used token granted (at most the tokens held) arrives at an instant
// drawn between AcquireN's return and ReleaseN: never more than N of them
// in a window (SPEC.md, "Cost known after the call": a debt is the
// server's count, never the limiter's grant).
func (c Config) checkConcurrentUsage(t *testing.T, limit rxthrottle.Limit) {
	c.checkHolders(t, limit, 16, 19, 4, func(r *rand.Rand, l rxthrottle.Limiter) (func() int, error) {
		n, used := 1+r.IntN(2), r.IntN(5)
		tok, err := l.AcquireN(context.Background(), n)
		return func() int {
			assert.NoError(t, tok.ReleaseN(used), "ReleaseN(%d) of %d", used, n)
			return min(used, n)
		}, err
	})
}
