package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestSetLimitReplansSleepers: callers of process A sleeping on
// departures the script gave them under Per(4, hour) when the limits
// become Per(2, hour), by A's own SetLimit or by another process's (B:
// another client and Bucket of the same name, which A hears of from
// nobody). The schedule goes on as if the new limits had always been in
// force (SPEC.md, "Changing limits"): the four callers keep their places
// and depart two a window, at e_(i-2) + W on Redis's clock, not four
// together at the instant their reservations said; the caller of cost 3,
// more than the new N, fails with ErrInvalidCost, counted in Cancelled.
// The limiter's clock is virtual (the windows are an hour long, so Redis's
// real clock never reaches them); only the waits for A to act on the
// change are bounded, not how long it takes.
//
// Without the re-planning, A's callers kept their reservations whatever
// the SetLimit: four departed together at the first's + W (a window of
// Per(2, hour) holding four), and after B's SetLimit the caller of cost 3
// slept on, since A read the configuration only when it admitted.
func TestSetLimitReplansSleepers(t *testing.T) {
	for _, by := range []string{"own", "other"} {
		t.Run(by, func(t *testing.T) {
			clk := newSignalClock()
			a, srv := newTestBucket(t, rxthrottle.Per(4, time.Hour), WithClock(clk))
			clk.watch(a.s)
			b, err := NewBucket(srv.Client(t), "test", rxthrottle.Per(4, time.Hour), WithTimeout(suiteTimeout))
			require.NoError(t, err)
			setter := map[string]*Bucket{"own": a, "other": b}[by]
			ctx := context.Background()
			require.NoError(t, a.WaitN(ctx, 4))
			done := make(chan error, 4)
			for range 4 {
				go func() { done <- a.Wait(ctx) }()
				require.Greater(t, clk.nextTimer(t), time.Hour-time.Minute)
			}
			costly := make(chan error, 1)
			go func() { costly <- a.WaitN(ctx, 3) }()
			require.Greater(t, clk.nextTimer(t), 2*time.Hour-time.Minute)

			require.NoError(t, setter.SetLimit(rxthrottle.Per(2, time.Hour)))
			select {
			case err := <-costly:
				require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
			case <-time.After(30 * time.Second):
				t.Fatal("a caller of 3 still sleeps on its reservation under Per(2, hour)")
			}
			// The four ask again in their places: two a window.
			var sleeps []time.Duration
			for range 4 {
				sleeps = append(sleeps, clk.nextTimer(t))
			}
			e := emissions(t, srv, a)
			require.Len(t, e, 8, "the first four's and the four re-planned: %v", e)
			for i := 4; i < 8; i++ {
				require.GreaterOrEqual(t, e[i], e[i-2]+micros(time.Hour), "departure %d: %v", i, e)
			}
			require.LessOrEqual(t, maxInWindow(e[4:], micros(time.Hour)), 2, "%v", e)
			require.Equal(t, 2, countOver(sleeps, time.Hour+time.Minute), "sleeps %v: two in the second window", sleeps)

			clk.Add(time.Hour + time.Minute)
			require.NoError(t, recv(t, done))
			require.NoError(t, recv(t, done))
			require.Equal(t, 2, a.Stats().Queued, "the second window's two still wait")
			clk.Add(time.Hour)
			require.NoError(t, recv(t, done))
			require.NoError(t, recv(t, done))
			requireCounts(t, a, [5]uint64{5, 1, 0, 0, 0})
		})
	}
}

// countOver returns how many of ds are longer than d.
func countOver(ds []time.Duration, d time.Duration) int {
	n := 0
	for _, x := range ds {
		if x > d {
			n++
		}
	}
	return n
}
