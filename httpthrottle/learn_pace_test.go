package httpthrottle_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLearnPaceRateFalls: nginx's limit_req at 10 per second, its gap
// found (pace.go), falls to 1 per second (a new zone from 6 s on, say a
// reload): each refusal widens the gap, by 5% or to what the bucket kept
// between the last two refusals (at most twice), but never beyond the
// window the run-up started from (1 per LearnProbeWindow, accepted): the
// bucket's real window is 1 s, sends no Retry-After, and no two arrivals
// are further apart than that window (issue 26: no refusal pattern stalls
// a client longer than one real window plus the largest Retry-After
// seen), with a round trip's slack. The refusals at the new rate are
// bounded (the widenings from 100 ms to 1 s, and no more), and every
// request is delivered.
func TestLearnPaceRateFalls(t *testing.T) {
	const total, maxPause = 60, 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		before := &leakyBucket{rate: 10, status: http.StatusServiceUnavailable}
		after := &leakyBucket{rate: 1, status: http.StatusServiceUnavailable}
		var switched atomic.Bool
		go func() {
			time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 6, 0, time.UTC)))
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
		arrivals := after.arrivals()
		refused := 0
		for i, a := range arrivals {
			if !a.accepted {
				refused++
			}
			if i > 0 {
				require.LessOrEqual(t, a.at.Sub(arrivals[i-1].at), time.Second+5*time.Millisecond, "arrivals %d and %d at 1 per second: a stall", i-1, i)
			}
		}
		last := run.tr.LearnStats().Last
		t.Logf("at 1 per second from 6 s: %d arrivals, %d refused; done in %v; last %v", len(arrivals), refused, run.elapsed, last)
		require.LessOrEqual(t, refused, 4, "refused at the new rate")
	})
}
