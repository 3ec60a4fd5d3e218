package httpthrottle_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLearnPaceBursts: nginx's limit_req with every burst from 0 to 10
// (nodelay, no header), at 10 and 25 per second, refusing with 429 and
// 503, from a wrong limit (Per(1000,1s) with WithLearnLimits) and from
// NewLearningTransport, 8 and 32 workers, round trips of 2 ms (and 0.5
// and 0.2 ms at 10 per second): at most 2 refusals as the bucket counts
// them (issue 26). The paced run-up fills a burst, and its refusal falls
// inside a pace at bursts 3-4 and 6-10 (10 per second), where it was
// taken for a window's only: the rate found, the bucket's and its burst
// (16-19 per second), was refused 3-5 times, 5% slower each time, and 7
// or 8 per second found anew. The next bare refusal now proves the
// bucket's gap (probe_floor.go), kept as a floor, and the count found
// anew is never below what a fixed window would need to have accepted the
// last two windows. Where the run-up's refusal is a new pace's first
// request, the refinement's 10% steps stop at the run-up's gap accepted
// (pace.go): at a round trip of 0.2 ms, burst=1, a step across it was
// refused and read as a bucket's without a burst (4 refusals). Every
// request is delivered, no arrival comes longer than the pause cap and a
// window after the one before, and the schedule is never faster than the
// bucket: some limit keeps W/N at least its gap; where two refusals
// proved the gap (pace.go, probe_floor.go), the count per window never
// binds before it (16-24 per second were found anew under a floor of
// 40-41 ms at 25 per second, bursts 6-8: 1.31-1.72x the ideal). The time
// over the ideal (the last of the requests sent as early as the bucket
// allows) is logged, not asserted.
func TestLearnPaceBursts(t *testing.T) {
	type cell struct {
		oneWay   time.Duration
		rate     int
		status   int
		learning bool
		workers  int
	}
	var cells []cell
	for _, rate := range []int{10, 25} {
		cells = append(cells, cell{time.Millisecond, rate, http.StatusTooManyRequests, false, 8},
			cell{time.Millisecond, rate, http.StatusServiceUnavailable, true, 32})
	}
	cells = append(cells, cell{250 * time.Microsecond, 10, http.StatusTooManyRequests, true, 8},
		cell{250 * time.Microsecond, 10, http.StatusServiceUnavailable, false, 32},
		cell{100 * time.Microsecond, 10, http.StatusTooManyRequests, false, 32})
	for _, c := range cells {
		for burst := 0; burst <= 10; burst++ {
			start := "Per(1000,1s)"
			if c.learning {
				start = "NewLearningTransport"
			}
			t.Run(fmt.Sprintf("rtt=%v/%d/burst=%d/%d/%s/c%d", 2*c.oneWay, c.rate, burst, c.status, start, c.workers), func(t *testing.T) {
				learnPaceBurst(t, c.rate, burst, c.status, c.learning, c.workers, c.oneWay)
			})
		}
	}
}

// learnPaceBurst is one cell of TestLearnPaceBursts.
func learnPaceBurst(t *testing.T, rate, burst, status int, learning bool, workers int, oneWay time.Duration) {
	const total, maxPause = 200, 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		h := &leakyBucket{rate: rate, burst: burst, status: status}
		run := virtualLearnLoadS(t, h, learning, workers, oneWay, 0, total, maxPause)
		times, refused := h.times(run.start)
		last := run.tr.LearnStats().Last
		ideal := time.Duration(total-1-burst) * time.Second / time.Duration(rate)
		t.Logf("limit_req %d r/s burst=%d: %d refused, in %v (%.3fx the ideal); last %v",
			rate, burst, refused, run.elapsed, float64(run.elapsed)/float64(ideal), last.Limits)
		require.Equal(t, total, len(times)-refused, "every request delivered")
		require.LessOrEqual(t, refused, 2, "refused by the bucket")
		requireNoStall(t, times, maxPause)
		slowest, gap := time.Duration(0), time.Duration(0)
		for _, l := range last.Limits {
			slowest = max(slowest, l.Window/time.Duration(l.N))
			if l.N == 1 {
				gap = max(gap, l.Window)
			}
		}
		require.GreaterOrEqual(t, slowest, time.Second/time.Duration(rate), "no faster than the bucket: %v", last.Limits)
		if refused == 2 {
			require.GreaterOrEqual(t, time.Duration(last.Limits[0].N)*gap, last.Limits[0].Window, "the count binds no sooner than the gap proven: %v", last.Limits)
		}
	})
}
