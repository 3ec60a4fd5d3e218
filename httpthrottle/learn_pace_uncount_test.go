package httpthrottle_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLearnPaceRefusalUncounted: nginx's limit_req at 10 per second,
// without a burst and with burst=5 nodelay (429, no header), from both
// starts, c8 and c32, a round trip of 0.3 ms. A leaky bucket counts no
// request it refuses, so the request after the refinement's refusal (the
// second: the gap is settled there) goes the gap settled on after the
// last accepted answer, not after the refusal's: it arrives at most that
// gap and a round trip after the last accepted arrival, and is accepted
// (it arrived a refused request's gap, 98 ms, later before, about 1% of
// a 200-request run). The count per window makes room for the refusal
// for a window, which the client counts and the bucket does not. At most
// 2 refusals, every request delivered.
func TestLearnPaceRefusalUncounted(t *testing.T) {
	const oneWay, total = 150 * time.Microsecond, 60
	for _, burst := range []int{0, 5} {
		for _, learning := range []bool{false, true} {
			for _, workers := range []int{8, 32} {
				t.Run(fmt.Sprintf("burst=%d/learning=%v/c%d", burst, learning, workers), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						h := &leakyBucket{rate: 10, burst: burst, status: http.StatusTooManyRequests}
						run := virtualLearnLoadS(t, h, learning, workers, oneWay, 0, total, 3*time.Second)
						arrivals := h.arrivals()
						last := run.tr.LearnStats().Last
						require.Len(t, last.Limits, 2, "%v", last.Limits)
						gap := last.Limits[1].Window
						var refusals []int
						for i, a := range arrivals {
							if !a.accepted {
								refusals = append(refusals, i)
							}
						}
						require.Equal(t, total, len(arrivals)-len(refusals), "every request delivered")
						require.Len(t, refusals, 2, "refused by the bucket")
						second := refusals[1]
						require.Less(t, second+1, len(arrivals))
						before, after := arrivals[second-1], arrivals[second+1]
						require.True(t, before.accepted && after.accepted)
						t.Logf("refused at %d; the next arrived %v after the last accepted, the gap kept %v",
							second, after.at.Sub(before.at), gap)
						require.LessOrEqual(t, after.at.Sub(before.at), gap+2*oneWay, "the request after the refusal")
						require.GreaterOrEqual(t, gap, time.Second/10, "the gap kept: the bucket's or longer")
					})
				})
			}
		}
	}
}
