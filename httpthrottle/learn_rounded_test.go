package httpthrottle_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// TestLearnRoundedUpResets: issue 26's sliding log whose reset (the
// instant its oldest arrival leaves the window) is written in whole Unix
// seconds rounded up, honest but up to a second late, with no LearnWindow:
// pausing until each reset made every window's reset a second later than
// the window, and 10 per 1 s was kept as 10 per 2 s (2x the ideal), 10
// per 3 s as 10 per 4 s. One request before a spent quota's reset finds
// the window (track_early.go): 200 requests at c8 and c32, the server's
// windows at four phases of a second, at most 2 refusals, never more than
// N in any window at the server, at most 1.15x the ideal (virtual time).
// A window of 1.5 s, which no whole number of seconds fits, costs the
// check's one refusal at most (its arrival aside, the window holds) and
// keeps the resets' window.
func TestLearnRoundedUpResets(t *testing.T) {
	const n, maxPause = 10, 5 * time.Second
	for _, c := range []struct {
		w       time.Duration
		total   int64
		refused int
		ratio   float64 // the most elapsed over the ideal; 0 to log it only
	}{
		{time.Second, 200, 2, 1.15},
		{3 * time.Second, 100, 2, 1.15},
		{1500 * time.Millisecond, 100, 1, 0},
	} {
		for _, workers := range []int{8, 32} {
			for _, phase := range []time.Duration{0, 300 * time.Millisecond, 700 * time.Millisecond, 999 * time.Millisecond} {
				t.Run(fmt.Sprintf("%v/c%d/%v", c.w, workers, phase), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						h, err := throttletest.NewHandler(rxthrottle.Per(n, c.w), throttletest.WithDialect(throttletest.DialectGitHub))
						require.NoError(t, err)
						run := virtualLearnLoadC(t, h, workers, phase, c.total, maxPause)
						var times []time.Duration
						for _, a := range h.Log() {
							// The check's refusal, if any, is counted
							// below; the window holds for the rest.
							if a.Accepted || c.refused > 1 {
								times = append(times, a.At.Sub(run.start))
							}
						}
						ideal := time.Duration((c.total+n-1)/n-1) * c.w
						ratio := float64(run.elapsed) / float64(ideal)
						st := h.Stats()
						last := run.tr.LearnStats().Last
						t.Logf("%d refused, %v (%.3fx the ideal %v); last %v", st.Refused, run.elapsed, ratio, ideal, last)
						require.LessOrEqual(t, st.Refused, c.refused, "refused")
						// The check's refusal is no sign of an estimating
						// server: nothing is spread.
						require.NotEqual(t, "spread", last.Source, "learned %v", last)
						requireWindow(t, times, n, c.w)
						requireNoStall(t, times, maxPause)
						if c.ratio > 0 {
							require.LessOrEqual(t, ratio, c.ratio, "elapsed over the ideal")
						}
					})
				})
			}
		}
	}
}
