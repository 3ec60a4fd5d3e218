package interop

import "testing"

// TestLearnAtGoLimiter: the checks of TestLearnAtRealLimiters at
// sethvargo/go-limiter (a fixed window from the key's first hit, its
// X-RateLimit-Reset and Retry-After HTTP-dates in UTC). Before those
// dates were read, its quotas had no reset and its 429s no pause: 2 to 5
// refusals and 20 to 26 runs of more than 10 arrivals in a second, in
// each of the four runs here (none of either since).
func TestLearnAtGoLimiter(t *testing.T) {
	for _, start := range []string{"Per(1000,1s)", "NewLearningTransport"} {
		for _, workers := range []int{8, 32} {
			t.Run(start+"/c"+itoa(workers), func(t *testing.T) {
				t.Parallel()
				learnAt(t, captureOnly(t)[0].wrap, start, workers)
			})
		}
	}
}
