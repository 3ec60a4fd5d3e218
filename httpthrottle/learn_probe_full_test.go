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

// TestLearnProbeFixedWindowFull: a fixed window of 10 per second that
// refuses with a bare 429 (no header at all, not even Retry-After), its
// windows at several phases of the client's start, 8 and 32 workers.
// The paced run-up crosses a window's start, so the window before the
// run-up's refusal holds more than the quota (13-14), and nothing says
// where the full window ends: the spreading's requests were refused one
// by one until it did, then once more at the next window's quota, 4-5
// refusals. A second refusal with nothing accepted since now holds the
// schedule past the latest end the run-up allows and keeps that window's
// count (internal/learn/probe_full.go): at most 2 refusals (issue 26),
// the rate found the quota or one below it (a window started by the
// client's first request is as likely as one on the clock), every
// request delivered, and no stall longer than the pause cap and a window.
func TestLearnProbeFixedWindowFull(t *testing.T) {
	const n, total, maxPause = 10, 200, 3 * time.Second
	for _, phase := range []time.Duration{0, 130 * time.Millisecond, 500 * time.Millisecond, 870 * time.Millisecond, 999 * time.Millisecond} {
		for _, workers := range []int{8, 32} {
			t.Run(fmt.Sprintf("%v/c%d", phase, workers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h, err := throttletest.NewHandler(rxthrottle.Per(n, time.Second), throttletest.WithAlgorithm(throttletest.FixedWindow))
					require.NoError(t, err)
					run := virtualLearnLoadC(t, bareHandler{h}, workers, phase, total, maxPause)
					var times []time.Duration
					for _, a := range h.Log() {
						times = append(times, a.At.Sub(run.start))
					}
					requireNoStall(t, times, maxPause)
					st := h.Stats()
					last := run.tr.LearnStats().Last
					t.Logf("bare fixed window from %v: %d accepted, %d refused, in %v; last %v", phase, st.Accepted, st.Refused, run.elapsed, last)
					require.Equal(t, total, st.Accepted, "every request delivered")
					require.LessOrEqual(t, st.Refused, 2, "refused by the server")
					require.NotEmpty(t, last.Limits)
					require.Equal(t, time.Second, last.Limits[0].Window)
					require.GreaterOrEqual(t, last.Limits[0].N, n-1, "the rate found")
					require.LessOrEqual(t, last.Limits[0].N, n, "the rate found")
				})
			})
		}
	}
}
