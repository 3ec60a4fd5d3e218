package httpthrottle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// hostileCases are servers whose quota headers lie, overflow, or change
// on every answer. header gets the request's number (from 0).
var hostileCases = []struct {
	name   string
	status int // 0: 200 on even requests, 429 on odd ones
	header func(i int) http.Header
}{
	{"negative", 200, func(int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"d";q=-5;w=-1`}, "X-Ratelimit-Limit": {"-3"}, "X-Ratelimit-Reset-After": {"-2"},
			"X-Ratelimit-Limit-Requests": {"-1"}, "X-Ratelimit-Reset-Requests": {"-5s"}}
	}},
	{"huge", 200, func(int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"d";q=999999999999999;w=999999999999999`}, "Ratelimit": {`"d";r=0;t=999999999999999`},
			"X-Ratelimit-Limit": {"99999999999999999999"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"99999999999999999999"}}
	}},
	{"garbage", 200, func(i int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"d;q=`}, "Ratelimit": {"\x00\xff;;,,"}, "X-Ratelimit-Limit": {"lots"},
			"X-Ratelimit-Reset": {"soon"}, "X-Ratelimit-Limit-Requests": {"1e9"}, "X-Ratelimit-Reset-Requests": {"whenever"}}
	}},
	{"policy changes every answer", 0, func(i int) http.Header {
		return http.Header{"Ratelimit-Policy": {fmt.Sprintf(`"p%d";q=%d;w=%d`, i, 1+i%50, 1+i%7)}, "Ratelimit": {fmt.Sprintf(`"p%d";r=%d;t=%d`, i, i%3, i%5)}}
	}},
	{"q=0", 200, func(int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"d";q=0;w=1`}, "Ratelimit": {`"d";r=0;t=1`}}
	}},
	{"w=0", 200, func(int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"d";q=5;w=0`}, "Ratelimit": {`"d";r=3;t=0`}}
	}},
	{"a bucket per request", 0, func(i int) http.Header {
		return http.Header{"X-Ratelimit-Limit": {strconv.Itoa(1 + i%40)}, "X-Ratelimit-Remaining": {"1"}, "X-Ratelimit-Reset-After": {"0.5"},
			"X-Ratelimit-Bucket": {fmt.Sprintf("b%d", i)}}
	}},
	{"a partition key per request", 200, func(i int) http.Header {
		return http.Header{"Ratelimit-Policy": {fmt.Sprintf(`"d";q=100;w=1;pk=:%s:`, b64(i))}, "Ratelimit": {fmt.Sprintf(`"d";r=50;t=1;pk=:%s:`, b64(i))}}
	}},
	{"window of a day", 200, func(int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"day";q=100000;w=86400`}}
	}},
	{"a counter that says little is left", 200, func(i int) http.Header {
		// A reset a quarter second away on every answer (a boundary
		// watched and held again and again) and remaining 0 or 1 (a
		// counter judged, or a quota spent).
		return http.Header{"X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Remaining": {strconv.Itoa(i % 2)}, "X-Ratelimit-Reset-After": {"0.250"}}
	}},
	{"a spent quota with whole-second resets", 200, func(i int) http.Header {
		// Renewals watched: the quota spent on every other answer, its
		// reset a whole number of seconds away, up to an hour.
		return http.Header{"Ratelimit-Policy": {`"d";q=30;w=1`}, "Ratelimit": {fmt.Sprintf(`"d";r=%d;t=%d`, i%2, []int{1, 3600, 0, 2}[i%4])}}
	}},
	{"reset going back and forth", 200, func(i int) http.Header {
		return http.Header{"X-Ratelimit-Limit-Requests": {"1000"}, "X-Ratelimit-Remaining-Requests": {strconv.Itoa(i % 2)},
			"X-Ratelimit-Reset-Requests": {[]string{"1ms", "9m", "0s", "1h"}[i%4]}}
	}},
}

func b64(i int) string { return []string{"YQ==", "Yg==", "Yw==", "ZA=="}[i%4] }

// TestLearnHostileHeaders: whatever the headers say, the client keeps the
// ceiling in every window, never waits longer than the maximum pause
// between two departures, and keeps at most LearnMaxBuckets buckets.
func TestLearnHostileHeaders(t *testing.T) {
	const (
		total, workers = 300, 32
		maxPause       = 3 * time.Second
		maxBuckets     = 8
	)
	ceiling := rxthrottle.Per(20, time.Second)
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var rec recorder
				var n atomic.Int64
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					readBody(req)
					rec.add("", time.Now())
					i := int(n.Add(1) - 1)
					status := c.status
					if status == 0 {
						status = []int{200, 429}[i%2]
					}
					h := c.header(i)
					if status == 429 {
						h.Set("Retry-After", strconv.Itoa(i%4))
					}
					return respond(req, status, h), nil
				})
				tr, err := httpthrottle.NewTransport(newBucket(t, 1000, time.Second, nil), httpthrottle.WithBase(base),
					httpthrottle.WithMaxPause(maxPause), httpthrottle.OnHeaderError(nil),
					httpthrottle.WithLearnLimits(httpthrottle.LearnCeiling(ceiling), httpthrottle.LearnMaxBuckets(maxBuckets),
						httpthrottle.LearnMaxAttempts(1))) // a departure a request
				require.NoError(t, err)
				start := time.Now()
				var wg sync.WaitGroup
				var next atomic.Int64
				for range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= total {
							req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/"+strconv.Itoa(rand.N(3)), nil)
							resp, err := tr.RoundTrip(req)
							if err != nil {
								t.Error(err)
								return
							}
							_ = resp.Body.Close()
						}
					}()
				}
				wg.Wait()
				times := rec.offsets("", start)
				require.Len(t, times, total)
				requireWindow(t, times, ceiling.N, ceiling.Window)
				for i := 1; i < len(times); i++ {
					require.LessOrEqual(t, times[i]-times[i-1], maxPause+ceiling.Window, "departures %d and %d are %v apart", i-1, i, times[i]-times[i-1])
				}
				st := tr.LearnStats()
				require.LessOrEqual(t, st.Buckets, maxBuckets)
				t.Logf("%s: %d requests in %v; %+v", c.name, total, times[len(times)-1], st)
			})
		})
	}
}
