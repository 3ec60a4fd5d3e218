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
// keeps the resets' window. A fixed window (GitHub's resets, their ends,
// exact in whole seconds) of 3 s looks alike once the client resumes at
// each reset: entered within its first second, it costs the check's one
// refusal; entered later (1.5 s into it, or 20 s into a minute), its first
// answers were read less than the window guessed before their reset, it
// is not checked, and nothing is refused.
func TestLearnRoundedUpResets(t *testing.T) {
	const n = 10
	for _, c := range []struct {
		w       time.Duration
		alg     throttletest.Algorithm
		offset  time.Duration // into the server's window, besides the phase
		total   int64
		refused int
		ratio   float64 // the most elapsed over the ideal; 0 to log it only
	}{
		{time.Second, throttletest.SlidingLog, 0, 200, 2, 1.15},
		{3 * time.Second, throttletest.SlidingLog, 0, 100, 2, 1.15},
		{1500 * time.Millisecond, throttletest.SlidingLog, 0, 100, 1, 0},
		{3 * time.Second, throttletest.FixedWindow, 0, 100, 1, 0},
		{3 * time.Second, throttletest.FixedWindow, 1500 * time.Millisecond, 100, 0, 0},
		{time.Minute, throttletest.FixedWindow, 20 * time.Second, 40, 0, 0},
	} {
		for _, workers := range []int{8, 32} {
			for _, phase := range []time.Duration{0, 300 * time.Millisecond, 700 * time.Millisecond, 999 * time.Millisecond} {
				t.Run(fmt.Sprintf("%v/%v/c%d/%v", c.alg, c.w, workers, c.offset+phase), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						maxPause := max(5*time.Second, 2*c.w)
						h, err := throttletest.NewHandler(rxthrottle.Per(n, c.w), throttletest.WithDialect(throttletest.DialectGitHub), throttletest.WithAlgorithm(c.alg))
						require.NoError(t, err)
						run := virtualLearnLoadC(t, h, workers, c.offset+phase, c.total, maxPause)
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
						if c.alg == throttletest.SlidingLog {
							requireWindow(t, times, n, c.w)
						}
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
