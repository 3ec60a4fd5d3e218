package httpthrottle_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// liarCases announce what the server does not enforce (it accepts 10 per
// second, a sliding log, and refuses with a bare 429), or resets no clock
// reads as they are. header gets the instant of the answer and how many of
// the last second's arrivals the server accepted.
var liarCases = []struct {
	name       string
	maxRefused int // issue 26: a liar costs at most 10, a flipping dialect 5
	header     func(now time.Time, used int) http.Header
}{
	{"X-RateLimit-Limit 1000", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(1000, 1000-used, strconv.FormatInt(now.Unix()+1, 10))
	}},
	{"X-RateLimit-Limit 1e6", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(1000000, 1000000-used, strconv.FormatInt(now.Unix()+1, 10))
	}},
	{"IETF q=1000000;w=1", 10, func(now time.Time, used int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"d";q=1000000;w=1`}, "Ratelimit": {`"d";r=` + strconv.Itoa(1000000-used) + `;t=1`}}
	}},
	{"reset in Unix milliseconds", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(10, 10-used, strconv.FormatInt(now.Add(time.Second).Truncate(time.Second).UnixMilli(), 10))
	}},
	{"reset overflowing", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(10, 10-used, "99999999999999999999")
	}},
	{"dialect flipping on every answer", 5, func(now time.Time, used int) http.Header {
		// Honest numbers, in another dialect on every answer.
		next := now.Add(time.Second).Truncate(time.Second)
		switch now.Nanosecond() / 1e6 % 4 {
		case 0:
			return xRateLimit(10, 10-used, strconv.FormatInt(next.Unix(), 10))
		case 1:
			return http.Header{"Ratelimit-Policy": {`"d";q=10;w=1`}, "Ratelimit": {`"d";r=` + strconv.Itoa(max(0, 10-used)) + `;t=1`}}
		case 2:
			return http.Header{"X-Ratelimit-Limit-Requests": {"10"}, "X-Ratelimit-Remaining-Requests": {strconv.Itoa(max(0, 10-used))},
				"X-Ratelimit-Reset-Requests": {next.Sub(now).Round(time.Millisecond).String()}}
		}
		return http.Header{"Ratelimit-Limit": {"10"}, "Ratelimit-Remaining": {strconv.Itoa(max(0, 10-used))}, "Ratelimit-Reset": {"1"}}
	}},
}

func xRateLimit(limit, remaining int, reset string) http.Header {
	return http.Header{"X-Ratelimit-Limit": {strconv.Itoa(limit)}, "X-Ratelimit-Remaining": {strconv.Itoa(max(0, remaining))}, "X-Ratelimit-Reset": {reset}}
}

// TestLearnLiars: 4 goroutines for 4 s at a server that accepts 10 per
// second and announces otherwise. A refusal inside an announced quota
// makes the learner distrust the announcement above what was accepted: a
// liar costs at most 10 refusals (issue 26), a dialect that changes on
// every answer at most 5, and no reset stalls the client (at least half
// the ideal is accepted).
func TestLearnLiars(t *testing.T) {
	const n, workers, run = 10, 4, 4 * time.Second
	for _, c := range liarCases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
				var mu sync.Mutex
				var accepted []time.Time
				var refused int
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					readBody(req)
					time.Sleep(time.Millisecond)
					mu.Lock()
					now := time.Now()
					in := 0
					for i := len(accepted) - 1; i >= 0 && now.Sub(accepted[i]) < time.Second; i-- {
						in++
					}
					status := http.StatusOK
					if in >= n {
						status, refused = http.StatusTooManyRequests, refused+1
					} else {
						accepted = append(accepted, now)
						in++
					}
					h := c.header(now, in)
					mu.Unlock()
					time.Sleep(time.Millisecond)
					return respond(req, status, h), nil
				})
				tr, err := httpthrottle.NewTransport(newBucket(t, 1000, time.Second, nil), httpthrottle.WithBase(base),
					httpthrottle.OnHeaderError(nil), httpthrottle.WithLearnLimits())
				require.NoError(t, err)
				start := time.Now()
				var wg sync.WaitGroup
				var failed atomic.Int64
				for range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for time.Since(start) < run {
							req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
							resp, err := tr.RoundTrip(req)
							if err != nil {
								failed.Add(1)
								return
							}
							_ = resp.Body.Close()
						}
					}()
				}
				wg.Wait()
				mu.Lock()
				defer mu.Unlock()
				t.Logf("%s: %d accepted, %d refused in %v; last %v", c.name, len(accepted), refused, time.Since(start), tr.LearnStats().Last)
				assert.Zero(t, failed.Load())
				assert.LessOrEqual(t, refused, c.maxRefused, "refused")
				assert.GreaterOrEqual(t, len(accepted), int(run.Seconds())*n/2, "accepted")
			})
		})
	}
}
