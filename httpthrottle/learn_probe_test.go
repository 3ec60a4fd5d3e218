package httpthrottle_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// TestLearnProbeVirtual: with nothing published but 429 and Retry-After,
// a learning Transport from a wrong limit finds the server's rate on
// virtual time, whatever the algorithm and wherever its windows fall. The
// slow start's run-up is refused once; after it at most one more request
// is refused: at a sliding-window counter, none (the spread starts one gap
// after the pause, when the counter no longer carries the run-up's burst,
// at a share such a counter accepts, and probes upward slowly), and at a
// fixed window whose boundary fell inside the run-up (which then counted
// two windows' quota), the one that finds the rate anew from what was
// accepted in its window. The rate found is the server's: 10 per second.
// No arrival comes longer than the pause cap after the one before. The
// time is logged, not asserted.
func TestLearnProbeVirtual(t *testing.T) {
	const n, total, maxPause = 10, 200, 3 * time.Second
	for _, alg := range []throttletest.Algorithm{throttletest.SlidingWindowCounter, throttletest.FixedWindow, throttletest.SlidingLog} {
		for _, phase := range []time.Duration{0, 130 * time.Millisecond, 500 * time.Millisecond, 870 * time.Millisecond, 993 * time.Millisecond, 995 * time.Millisecond, 999 * time.Millisecond} {
			t.Run(alg.String()+"/"+phase.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h, err := throttletest.NewHandler(rxthrottle.Per(n, time.Second), throttletest.WithAlgorithm(alg))
					require.NoError(t, err)
					run := virtualLearnLoad(t, h, phase, total, maxPause)
					var times []time.Duration
					runUp, after := 0, 0
					for _, a := range h.Log() {
						at := a.At.Sub(run.start)
						times = append(times, at)
						switch {
						case a.Accepted:
						case at < 100*time.Millisecond:
							runUp++
						default:
							after++
						}
					}
					requireNoStall(t, times, maxPause)
					last := run.tr.LearnStats().Last
					t.Logf("%v, windows from %v: %d refused in the run-up, %d after, in %v (%.1f%% of the quota); %d changes, last %v",
						alg, phase, runUp, after, run.elapsed, 100*float64(total)/run.elapsed.Seconds()/n, run.events, last)
					require.LessOrEqual(t, runUp+after, 10, "refused by the server")
					maxAfter := 0
					if alg == throttletest.FixedWindow && phase > 990*time.Millisecond {
						maxAfter = 1 // the boundary fell inside the run-up
					}
					require.LessOrEqual(t, after, maxAfter, "refused after the run-up")
					require.NotEmpty(t, last.Limits)
					require.Equal(t, rxthrottle.Per(n, time.Second), last.Limits[0], "the rate found")
					require.Equal(t, "429", last.Source)
				})
			})
		}
	}
}

// TestLearnProbeQuotaFalls: a server that finds its rate from 429s at
// 10 per second, then halves the quota (a new sliding log of 5 per
// second from 8 s on): the first refusal at the new quota finds it from
// what was accepted in its window, instead of lowering the share by 5%
// at each of a dozen refusals, each a pause.
func TestLearnProbeQuotaFalls(t *testing.T) {
	const total, maxPause = 120, 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		before, err := throttletest.NewHandler(rxthrottle.Per(10, time.Second))
		require.NoError(t, err)
		after, err := throttletest.NewHandler(rxthrottle.Per(5, time.Second))
		require.NoError(t, err)
		var switched atomic.Bool
		go func() {
			time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 8, 0, time.UTC)))
			switched.Store(true)
		}()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if switched.Load() {
				after.ServeHTTP(w, r)
				return
			}
			before.ServeHTTP(w, r)
		})
		run := virtualLearnLoad(t, h, 0, total, maxPause)
		st := after.Stats()
		last := run.tr.LearnStats().Last
		t.Logf("at 5 per second from 8 s: %d accepted, %d refused; done in %v; last %v", st.Accepted, st.Refused, run.elapsed, last)
		require.LessOrEqual(t, st.Refused, 2, "refused at the new quota")
		require.NotEmpty(t, last.Limits)
		require.LessOrEqual(t, last.Limits[0].N, 5, "the rate found anew")
	})
}
