package httpthrottle_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// TestLearnSlowFirstAnswer: issue 28's TestLearnLoopbackCounter/github
// saw 11 arrivals in 869 ms at a 10 per second server under a CPU hog.
// Its first answer was read late in the server's window, and the time to
// the reset stood in for the window until an answer from the next one was
// read: a quota went in the little left of the window and, with the
// boundary's timer late (the hog), another just after the reset. Here the
// first answer is read 900 ms after its request arrived, 48 ms before the
// server's window ends, and the Transport's timers fire 80 ms late. At
// least LearnProbeWindow stands in for the window: no window holds more
// than the quota at the server, from the first arrival on, in each
// dialect whose resets mark the windows and at each algorithm.
func TestLearnSlowFirstAnswer(t *testing.T) {
	const n, total, maxPause = 10, 60, 3 * time.Second
	for _, d := range []throttletest.Dialect{throttletest.DialectGitHub, throttletest.DialectDiscord, throttletest.DialectOpenAI} {
		for _, alg := range []throttletest.Algorithm{throttletest.SlidingLog, throttletest.FixedWindow, throttletest.SlidingWindowCounter} {
			t.Run(d.String()+"/"+alg.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h, err := throttletest.NewHandler(rxthrottle.Per(n, time.Second), throttletest.WithDialect(d), throttletest.WithAlgorithm(alg))
					require.NoError(t, err)
					var answered atomic.Bool
					slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						h.ServeHTTP(w, r)
						if answered.CompareAndSwap(false, true) {
							time.Sleep(900 * time.Millisecond)
						}
					})
					run := virtualLearnLoad(t, slow, 50*time.Millisecond, total, maxPause,
						httpthrottle.WithClock(lateClock{clock.New(), 80 * time.Millisecond}))
					var times []time.Duration
					for _, a := range h.Log() {
						times = append(times, a.At.Sub(run.start))
					}
					t.Logf("%d arrivals in %v; last %v", len(times), run.elapsed, run.tr.LearnStats().Last)
					requireWindow(t, times, n, time.Second)
				})
			})
		}
	}
}

// lateClock is a clock whose timers fire late, as on a loaded machine.
type lateClock struct {
	clock.Clock
	late time.Duration
}

func (c lateClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	return c.Clock.AfterFunc(d+c.late, f)
}
