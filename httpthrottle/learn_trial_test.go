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

// TestLearnProbeLogTrial: an exact sliding log of 10 per second that
// refuses with 429 and a whole-second Retry-After, nothing else, from 8
// and 32 workers at several phases. The run-up's refusal (the only one)
// asks for a pause of a whole second, after which the log's window is
// empty; the rate found goes as a log takes it (internal/learn
// probe_trial.go): the 10 requests after the pause arrive one round trip
// apart, not spread over the window at the 93% a sliding-window counter
// accepts, and a window's quota in every window after, never more. The
// last of 200 arrives by 21.5 s on virtual time (the ideal is 19 s; it
// was 23.0 s spread, the run-up and the pause taking 3.4 s for 15).
// At the sliding-window counter, which refuses that, the trial costs one
// refusal, alone (one request in flight), and the rate found is kept.
func TestLearnProbeLogTrial(t *testing.T) {
	const n, total, maxPause = 10, 200, 3 * time.Second
	for _, alg := range []throttletest.Algorithm{throttletest.SlidingLog, throttletest.SlidingWindowCounter} {
		for _, phase := range []time.Duration{0, 130 * time.Millisecond, 500 * time.Millisecond, 995 * time.Millisecond} {
			for _, workers := range []int{8, 32} {
				t.Run(fmt.Sprintf("%v/%v/c%d", alg, phase, workers), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						h, err := throttletest.NewHandler(rxthrottle.Per(n, time.Second), throttletest.WithAlgorithm(alg))
						require.NoError(t, err)
						run := virtualLearnLoadC(t, h, workers, phase, total, maxPause)
						var accepted, refusals []time.Duration
						for _, a := range h.Log() {
							if a.Accepted {
								accepted = append(accepted, a.At.Sub(run.start))
							} else {
								refusals = append(refusals, a.At.Sub(run.start))
							}
						}
						requireNoStall(t, append(accepted, refusals...), maxPause)
						last := run.tr.LearnStats().Last
						t.Logf("%v from %v, c%d: refused at %v, the last in %v; last %v", alg, phase, workers, refusals, accepted[len(accepted)-1], last)
						require.Len(t, accepted, total, "every request delivered")
						require.NotEmpty(t, last.Limits)
						require.Equal(t, rxthrottle.Per(n, time.Second), last.Limits[0], "the rate found")
						if alg == throttletest.SlidingWindowCounter {
							require.LessOrEqual(t, len(refusals), 2, "the run-up's refusal and the trial's")
							for i := 1; i < len(refusals); i++ {
								require.GreaterOrEqual(t, refusals[i]-refusals[i-1], time.Second, "refusals %d and %d: two in one pause", i-1, i)
							}
							return
						}
						require.Len(t, refusals, 1, "the run-up's refusal only")
						requireWindow(t, accepted, n, time.Second)
						i := 0
						for i < len(accepted) && accepted[i] < refusals[0] {
							i++
						}
						require.Greater(t, len(accepted), i+n)
						require.GreaterOrEqual(t, accepted[i]-refusals[0], time.Second, "the Retry-After is kept")
						require.Less(t, accepted[i+n-1]-accepted[i], time.Duration(n)*5*time.Millisecond,
							"the %d requests after the pause go as a log takes them, a round trip apart, not spread", n)
						require.Less(t, accepted[len(accepted)-1], 21500*time.Millisecond, "the last request")
					})
				})
			}
		}
	}
}
