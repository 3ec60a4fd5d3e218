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
// per 3 s as 10 per 4 s. A window that holds its last requests back finds
// the window (track_early.go): 200 requests at c8 and c32, the server's
// windows at four phases of a second, nothing refused, never more than N
// in any window at the server, at most 1.15x the ideal at 1 s and 3 s
// (virtual time). A window of 1.5 s, which no whole number of seconds
// fits, was checked by a request the server refused, and kept as the
// resets' 2 or 3 s (1.40-2.04x); it is found to within the held-back
// requests' spacing, at most 1.2x here (1.09-1.16x logged). A fixed
// window (GitHub's resets, their ends, exact in whole seconds) of 3 s
// looks alike once the client resumes at each reset: entered within its
// first second, the held-back requests tell it from a sliding log at no
// refusal (the check's refusal before); entered later (1.5 s into it, or
// 20 s into a minute), its first answers were read less than the window
// tried before their reset, and it is not checked.
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
		{time.Second, throttletest.SlidingLog, 0, 200, 0, 1.15},
		{3 * time.Second, throttletest.SlidingLog, 0, 200, 0, 1.15},
		{1500 * time.Millisecond, throttletest.SlidingLog, 0, 200, 0, 1.2},
		{3 * time.Second, throttletest.FixedWindow, 0, 100, 0, 0},
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
							times = append(times, a.At.Sub(run.start))
						}
						ideal := time.Duration((c.total+n-1)/n-1) * c.w
						ratio := float64(run.elapsed) / float64(ideal)
						st := h.Stats()
						last := run.tr.LearnStats().Last
						t.Logf("%d refused, %v (%.3fx the ideal %v); last %v", st.Refused, run.elapsed, ratio, ideal, last)
						require.LessOrEqual(t, st.Refused, c.refused, "refused")
						// The held-back requests are no sign of an
						// estimating server: nothing is spread.
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
