package httpthrottle_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// notRateCases are refusals that are no evidence of the bucket's rate. The
// server keeps a sliding log of 10 per second and announces it honestly
// in Discord's dialect; every 8th arrival it refuses with header instead,
// counting nothing in the log, its announced Remaining unchanged (in
// Discord's documented shared-scope example, 9 of 10 are left).
var notRateCases = []struct {
	name   string
	header http.Header
	every  int  // a refusal every every-th arrival
	final  bool // the caller gets it at once, never tried again
}{
	// OpenAI's and Anthropic's SDKs never retry x-should-retry: false
	// (billing, a spent quota of money, an invalid key).
	{"x-should-retry false", http.Header{"X-Should-Retry": {"false"}}, 8, true},
	// Discord's docs: "429 errors returned with X-RateLimit-Scope: shared
	// are not counted against you"; a resource's limit, not the bucket's.
	{"Discord scope shared", http.Header{"X-Ratelimit-Scope": {"shared"}, "Retry-After": {"1"}}, 30, false},
	{"Discord global", http.Header{"X-Ratelimit-Scope": {"global"}, "X-Ratelimit-Global": {"true"}, "Retry-After": {"1"}}, 30, false},
}

// TestLearnRefusalsNotRateEvidence: a refusal that says nothing of the
// rate (notRateCases) neither makes the learner distrust the announced
// quota nor makes it find a rate from refusals: every learned limit is
// the announced 10 per second, the server's log refuses at most once, and
// the client keeps its pace. Without the classification (classify) each
// such refusal, inside a quota that says some is left, was taken as a
// liar's and the rate was found from refusals.
func TestLearnRefusalsNotRateEvidence(t *testing.T) {
	const n, workers, run = 10, 4, 6 * time.Second
	for _, c := range notRateCases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var accepted []time.Time
				var arrivals, refused, notRate int
				var events []httpthrottle.LearnEvent
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					readBody(req)
					time.Sleep(time.Millisecond)
					mu.Lock()
					defer mu.Unlock()
					now := time.Now()
					arrivals++
					in := 0
					for i := len(accepted) - 1; i >= 0 && now.Sub(accepted[i]) < time.Second; i-- {
						in++
					}
					h := http.Header{"X-Ratelimit-Limit": {strconv.Itoa(n)}, "X-Ratelimit-Bucket": {"b"}}
					status := http.StatusOK
					switch {
					case arrivals%c.every == 0:
						status, notRate = http.StatusTooManyRequests, notRate+1
						for k, v := range c.header {
							h[k] = v
						}
					case in >= n:
						status, refused = http.StatusTooManyRequests, refused+1
					default:
						accepted = append(accepted, now)
						in++
					}
					h.Set("X-Ratelimit-Remaining", strconv.Itoa(n-in))
					reset := time.Second
					if in > 0 {
						reset = accepted[len(accepted)-in].Add(time.Second).Sub(now)
					}
					h.Set("X-Ratelimit-Reset-After", strconv.FormatFloat(reset.Seconds(), 'f', 3, 64))
					return respond(req, status, h), nil
				})
				tr, err := httpthrottle.NewTransport(newBucket(t, 1000, time.Second, nil), httpthrottle.WithBase(base),
					httpthrottle.OnHeaderError(nil), httpthrottle.WithLearnLimits(httpthrottle.OnLearn(func(ev httpthrottle.LearnEvent) {
						mu.Lock()
						events = append(events, ev)
						mu.Unlock()
					})))
				require.NoError(t, err)
				start := time.Now()
				var wg sync.WaitGroup
				var got429 int
				for range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for time.Since(start) < run {
							req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://discord.example/", nil)
							resp, err := tr.RoundTrip(req)
							if !assert.NoError(t, err) {
								return
							}
							mu.Lock()
							if resp.StatusCode == http.StatusTooManyRequests {
								got429++
							}
							mu.Unlock()
							_ = resp.Body.Close()
						}
					}()
				}
				wg.Wait()
				mu.Lock()
				defer mu.Unlock()
				t.Logf("%s: %d accepted, %d refused by the log, %d refused otherwise, %d 429s to the caller in %v; last %v",
					c.name, len(accepted), refused, notRate, got429, time.Since(start), tr.LearnStats().Last)
				assert.LessOrEqual(t, refused, 1, "refused by the log")
				for _, ev := range events {
					// Never found from refusals ("429") nor spread for a
					// liar ("spread"): the announcement and its ramp only.
					assert.NotContains(t, []string{"429", "spread"}, ev.Source, "%v", ev)
				}
				if c.final {
					assert.Equal(t, notRate, got429, "every x-should-retry: false reaches the caller")
				}
				// The pace: the quota but for the refusals' own pauses
				// (Retry-After: 1 for Discord's).
				paused := 0
				if !c.final {
					paused = notRate
				}
				assert.GreaterOrEqual(t, len(accepted), (int(run.Seconds())-paused)*n*8/10, "accepted")
			})
		})
	}
}
