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
	"testing"
	"testing/synctest"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
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
	// Concurrency caps the holds open at once (rxthrottle.WithConcurrency);
	// 0 is no cap. Only set for a limiter that claims Concurrency.
	Concurrency int
	// MaxQueue bounds the callers waiting (rxthrottle.WithMaxQueue), if
	// QueueBounded. Only set for a limiter that claims QueueBound.
	MaxQueue     int
	QueueBounded bool
}

// Claims are the optional rules of SPEC.md a limiter says it keeps; Run
// checks each one claimed, exactly on virtual time, and the random cases
// mix them all. A limiter claims one only once it implements it.
type Claims struct {
	// Deadlines: a caller whose context's deadline comes no later than the
	// earliest instant it could possibly go is refused at arrival, with an
	// error wrapping rxthrottle.ErrDeadline and context.DeadlineExceeded.
	// Unclaimed, every check cancels with a cancel function instead.
	Deadlines bool
	// Concurrency: Setup.Concurrency caps the holds open.
	Concurrency bool
	// Priorities: rxthrottle.WithPriority orders the waiting callers.
	Priorities bool
	// QueueBound: Setup.MaxQueue bounds the waiting callers
	// (rxthrottle.ErrQueueFull, counted in Stats.Refused).
	QueueBound bool
	// ReleaseN: Token.ReleaseN gives back what a call did not use and
	// counts a debt beyond it.
	ReleaseN bool
	// FairShares: rxthrottle.WithTenant shares the tokens among the
	// tenants of the waiting callers by their weights (SPEC.md, "Fair
	// shares").
	FairShares bool
}

// features returns the claims as the model's random features.
func (c Claims) features() specmodel.Features {
	return specmodel.Features{Concurrency: c.Concurrency, Priorities: c.Priorities, QueueBound: c.QueueBound, Deadlines: c.Deadlines, ReleaseN: c.ReleaseN, Tenants: c.FairShares}
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
	// Claims are the optional rules the limiter keeps.
	Claims Claims
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
	for _, s := range scenarios(w, tk) {
		c.run(t, s.name, func(t *testing.T) { c.checkSchedule(t, s) })
	}
	for _, ck := range []struct {
		name  string
		check func(t *testing.T, w, tk time.Duration)
	}{
		{"costs out of range are errors at once", c.checkCosts},
		{"Allow takes a free token and never waits", c.checkAllow},
		{"context: nil, ended, ending while waiting", c.checkContext},
		{"Pause holds everyone back until its end", c.checkPause},
		{"SetLimit keeps the history", c.checkSetLimit},
		{"SetLimit ends a wait it makes impossible, counted as cancelled", c.checkSetLimitCost},
		{"Stats counts admissions", c.checkStats},
		{"Stats counts a caller come with an ended context as cancelled", c.checkStatsEnded},
		{"many holders: at most N arrivals in any window", func(t *testing.T, w, _ time.Duration) {
			c.checkConcurrent(t, rxthrottle.Per(4, w))
		}},
	} {
		c.run(t, ck.name, func(t *testing.T) { ck.check(t, w, tk) })
	}
	c.runMetering(t, w, tk)
	if c.Virtual {
		c.run(t, "random cases match the model", c.checkRandom)
	}
}

// checkCosts: a cost below 1 or above N is refused at once and takes no
// token; with a context that has ended too, the cost's error comes first,
// as every bad argument's does (SPEC.md, "Weights").
func (c Config) checkCosts(t *testing.T, w, _ time.Duration) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{rxthrottle.Per(3, w)}})
	ctx := context.Background()
	require.ErrorIs(t, l.WaitN(ctx, 0), rxthrottle.ErrInvalidCost)
	require.ErrorIs(t, l.WaitN(ctx, 4), rxthrottle.ErrInvalidCost)
	_, err := l.AcquireN(ctx, -1)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	_, err = l.AllowN(ctx, 4)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{0, 4} {
		err := l.WaitN(ended, n)
		require.ErrorIs(t, err, rxthrottle.ErrInvalidCost, "WaitN(ended, %d)", n)
		require.NotErrorIs(t, err, context.Canceled, "WaitN(ended, %d)", n)
		_, err = l.AcquireN(ended, n)
		require.ErrorIs(t, err, rxthrottle.ErrInvalidCost, "AcquireN(ended, %d)", n)
		require.NotErrorIs(t, err, context.Canceled, "AcquireN(ended, %d)", n)
		_, err = l.AllowN(ended, n)
		require.ErrorIs(t, err, rxthrottle.ErrInvalidCost, "AllowN(ended, %d)", n)
		require.NotErrorIs(t, err, context.Canceled, "AllowN(ended, %d)", n)
	}
	require.Zero(t, l.Stats().Cancelled, "a bad cost counts nowhere, its context ended or not")
	ok, err := l.AllowN(ctx, 3)
	require.NoError(t, err)
	require.True(t, ok, "a bad cost took no token")
}

// checkAllow: Allow takes the free tokens and says false after them.
func (c Config) checkAllow(t *testing.T, w, _ time.Duration) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{rxthrottle.Per(2, w)}})
	for i, want := range []bool{true, true, false} {
		requireAllow(t, l, want, fmt.Sprintf("Allow #%d", i+1))
	}
}

// checkContext: a nil or ended context is an error, and a wait whose
// context ends takes no token (refused at arrival if Deadlines is claimed).
func (c Config) checkContext(t *testing.T, w, _ time.Duration) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{rxthrottle.Per(1, w)}})
	//lint:ignore SA1012 a nil context is what this checks
	require.Error(t, l.Wait(nil)) //nolint:staticcheck
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.Wait(ended), context.Canceled)
	// The token renews a window after this Wait's admission, which is
	// no earlier than start.
	start := time.Now()
	require.NoError(t, l.Wait(context.Background()))
	short, cancel := context.WithTimeout(context.Background(), w/2)
	defer cancel()
	arrived := time.Now()
	_, err := l.Acquire(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	if c.Claims.Deadlines {
		// The next token is a window away: refused at once.
		require.ErrorIs(t, err, rxthrottle.ErrDeadline)
		c.near(t, 0, time.Since(arrived), "a hopeless deadline is refused at arrival")
	}
	require.NoError(t, l.Wait(context.Background()))
	c.near(t, w, time.Since(start), "the cancelled Acquire took no token")
}

// checkPause: no departure before the longest Pause's end.
func (c Config) checkPause(t *testing.T, w, tk time.Duration) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{rxthrottle.Per(5, w)}})
	start := time.Now()
	l.Pause(start.Add(3 * tk))
	l.Pause(start.Add(tk)) // never shortens a longer pause
	require.NoError(t, l.Wait(context.Background()))
	c.near(t, 3*tk, time.Since(start), "departure after Pause")
}

// checkSetLimit: a new limit counts the admissions already made, and a bad
// one changes nothing.
func (c Config) checkSetLimit(t *testing.T, w, _ time.Duration) {
	per := rxthrottle.Per
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{per(2, w)}})
	ctx := context.Background()
	require.NoError(t, l.Wait(ctx))
	require.NoError(t, l.Wait(ctx))
	require.NoError(t, l.SetLimit(per(3, w)))
	require.Equal(t, []rxthrottle.Limit{per(3, w)}, l.Limits())
	requireAllow(t, l, true, "one more of 3")
	requireAllow(t, l, false, "3 of 3 used in this window")
	err := l.SetLimit(per(0, w))
	require.ErrorIs(t, err, rxthrottle.ErrInvalidLimit)
	require.Equal(t, []rxthrottle.Limit{per(3, w)}, l.Limits(), "a bad SetLimit changes nothing")
}

// checkStats: Stats.Admitted counts Waits and Acquires.
func (c Config) checkStats(t *testing.T, w, _ time.Duration) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{rxthrottle.Per(5, w)}})
	ctx := context.Background()
	for range 3 {
		require.NoError(t, l.Wait(ctx))
	}
	tok, err := l.Acquire(ctx)
	require.NoError(t, err)
	tok.Release()
	require.EqualValues(t, 4, l.Stats().Admitted)
}

// checkStatsEnded: a Wait or Acquire whose context had ended when it called
// counts in Cancelled, as one whose context ends while it waits, so that
// Admitted + Cancelled + Refused + Failed + Queued is every such call with
// a valid cost; a bad cost and an Allow that fails count nowhere.
func (c Config) checkStatsEnded(t *testing.T, w, _ time.Duration) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{rxthrottle.Per(2, w)}})
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.Wait(ended), context.Canceled)
	require.ErrorIs(t, l.WaitN(ended, 2), context.Canceled)
	_, err := l.Acquire(ended)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, l.WaitN(ended, 3), rxthrottle.ErrInvalidCost, "an ended context and a bad cost: the cost first")
	require.ErrorIs(t, l.WaitN(context.Background(), 0), rxthrottle.ErrInvalidCost)
	_, err = l.Allow(ended)
	require.ErrorIs(t, err, context.Canceled)
	_, err = l.AllowN(context.Background(), 3)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	st := l.Stats()
	require.Equal(t, [4]uint64{0, 3, 0, 0}, [4]uint64{st.Admitted, st.Cancelled, st.Refused, st.Failed},
		"Admitted, Cancelled, Refused, Failed")
	require.Zero(t, st.Queued)
	require.NoError(t, l.Wait(context.Background()))
	requireAllow(t, l, true, "the ended callers took no token")
	st = l.Stats()
	require.Equal(t, [2]uint64{2, 3}, [2]uint64{st.Admitted, st.Cancelled}, "Admitted, Cancelled")
}

// checkRandom runs random cases of the claimed features against the model.
func (c Config) checkRandom(t *testing.T) {
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		rc := specmodel.RandomMeteredCase(r, 3, c.Claims.features())
		if len(rc.Items) == 0 {
			continue
		}
		var s scenario
		s.name = fmt.Sprint("seed ", seed)
		s.cfg, s.items, s.acquire = rc.Config, rc.Items, rc.Acquire
		c.checkSchedule(t, s)
		time.Sleep(time.Hour) // every hold ends before the next case
	}
}
