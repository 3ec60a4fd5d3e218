package limitertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/require"
)

// runMetering runs the checks of the optional rules the limiter claims, in
// windows of w and ticks of tk.
func (c Config) runMetering(t *testing.T, w, tk time.Duration) {
	for _, s := range meteringScenarios(c.Claims, w, tk) {
		c.run(t, s.name, func(t *testing.T) { c.checkSchedule(t, s) })
	}
	per := rxthrottle.Per
	if c.Claims.Priorities {
		c.run(t, "a priority on an ended context is its error, at once", func(t *testing.T) {
			l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(1, w)}})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			require.ErrorIs(t, l.Wait(rxthrottle.WithPriority(ctx, 5)), context.Canceled)
			ok, err := l.Allow(context.Background())
			require.NoError(t, err)
			require.True(t, ok, "the refused caller took no token")
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
			ok, err := l.Allow(ctx)
			require.NoError(t, err)
			require.True(t, ok, "one of 3 used by ReleaseN(1), one by the Release: one is free")
			ok, err = l.Allow(ctx)
			require.NoError(t, err)
			require.False(t, ok, "and no more: the late ReleaseN recorded nothing")
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
	lim := func(n int, win time.Duration) specmodel.Limit { return specmodel.Limit{N: n, Window: win} }
	wait := func(at time.Duration) specmodel.Item { return specmodel.Item{Arrive: at, Cancel: -1} }
	hold := func(at, h time.Duration) specmodel.Item {
		return specmodel.Item{Arrive: at, Cancel: -1, Hold: h, Acquire: true}
	}
	var out []scenario
	if cl.Concurrency {
		out = append(out, scenario{
			name: "concurrency: at most k holds open, a released one frees its place at once",
			cfg:  specmodel.Config{Limits: []specmodel.Limit{lim(10, w)}, Concurrency: 2},
			items: []specmodel.Item{
				hold(0, 3*tk), hold(0, 5*tk), hold(0, tk), wait(tk), hold(2*tk, tk),
			},
			acquire: []bool{true, true, true, false, true},
		})
	}
	if cl.Priorities {
		high := wait(2 * tk)
		high.Priority = 1
		low := wait(tk)
		low.Priority = -1
		out = append(out, scenario{
			name:    "priorities: the higher goes first, then arrival order",
			cfg:     specmodel.Config{Limits: []specmodel.Limit{lim(1, w)}},
			items:   []specmodel.Item{wait(0), low, wait(tk), high},
			acquire: make([]bool, 4),
		})
	}
	if cl.QueueBound {
		out = append(out, scenario{
			name:    "queue bound: a caller that would wait beyond it is refused",
			cfg:     specmodel.Config{Limits: []specmodel.Limit{lim(1, w)}, MaxQueue: 1, QueueBounded: true},
			items:   []specmodel.Item{wait(0), wait(tk), wait(2 * tk), wait(w + tk)},
			acquire: make([]bool, 4),
		})
	}
	if cl.Deadlines {
		out = append(out, scenario{
			name: "deadlines: refused at arrival if before the earliest departure, else waits",
			cfg:  specmodel.Config{Limits: []specmodel.Limit{lim(1, w)}},
			items: []specmodel.Item{
				hold(0, 2*tk),
				{Arrive: tk, Cancel: w + tk/2},        // a held token ahead: could go at tk + w
				{Arrive: tk, Cancel: w + 2*tk + tk/2}, // waits, and goes at 2tk + w
			},
			acquire: []bool{true, false, false},
		})
	}
	if cl.ReleaseN {
		used := func(at, h time.Duration, cost, n int) specmodel.Item {
			return specmodel.Item{Arrive: at, Cancel: -1, Hold: h, Acquire: true, Cost: cost, ReleaseN: true, Used: n}
		}
		out = append(out, scenario{
			name: "ReleaseN: what was not used comes back at once, a debt delays",
			cfg:  specmodel.Config{Limits: []specmodel.Limit{lim(4, w)}},
			items: []specmodel.Item{
				used(0, 2*tk, 4, 1), // 3 back at 2tk
				{Arrive: tk, Cancel: -1, Cost: 3},
				used(w+3*tk, tk, 1, 9), // a debt of 8, more than N
				wait(w + 5*tk),
			},
			acquire: []bool{true, false, true, false},
		})
	}
	return out
}
