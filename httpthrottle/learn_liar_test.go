package httpthrottle_test

import (
	"context"
	"net/http"
	"sort"
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
	retryAfter int           // the refusals' Retry-After in seconds, 0 for none
	idle       time.Duration // the client stops after its first window for this long, 0 for never
}{
	{"X-RateLimit-Limit 1000", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(1000, 1000-used, strconv.FormatInt(now.Unix()+1, 10))
	}, 0, 0},
	{"X-RateLimit-Limit 1e6", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(1000000, 1000000-used, strconv.FormatInt(now.Unix()+1, 10))
	}, 0, 0},
	{"IETF q=1000000;w=1", 10, func(now time.Time, used int) http.Header {
		return http.Header{"Ratelimit-Policy": {`"d";q=1000000;w=1`}, "Ratelimit": {`"d";r=` + strconv.Itoa(1000000-used) + `;t=1`}}
	}, 0, 0},
	{"reset in Unix milliseconds", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(10, 10-used, strconv.FormatInt(now.Add(time.Second).Truncate(time.Second).UnixMilli(), 10))
	}, 0, 0},
	{"reset overflowing", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(10, 10-used, "99999999999999999999")
	}, 0, 0},
	{"reset in Unix milliseconds, Retry-After 2", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(10, 10-used, strconv.FormatInt(now.Add(time.Second).Truncate(time.Second).UnixMilli(), 10))
	}, 2, 0},
	{"reset overflowing, Retry-After 2", 10, func(now time.Time, used int) http.Header {
		return xRateLimit(10, 10-used, "99999999999999999999")
	}, 2, 0},
	{"reset in Unix milliseconds, the client idle 3 s after its first window", 10, func(now time.Time, used int) http.Header {
		// The gap between the first window's reset and the next one read
		// is the idle time, not a window (TestIdleGapIsNoWindow).
		return xRateLimit(10, 10-used, strconv.FormatInt(now.Add(time.Second).Truncate(time.Second).UnixMilli(), 10))
	}, 0, 3 * time.Second},
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
	}, 0, 0},
}

func xRateLimit(limit, remaining int, reset string) http.Header {
	return http.Header{"X-Ratelimit-Limit": {strconv.Itoa(limit)}, "X-Ratelimit-Remaining": {strconv.Itoa(max(0, remaining))}, "X-Ratelimit-Reset": {reset}}
}

// TestLearnLiars: 4 goroutines for 4 s at a server that accepts 10 per
// second (a sliding log, refusing with a bare 429 or one with a
// Retry-After) and announces otherwise. A refusal inside an announced
// quota makes the learner distrust the announcement above what was
// accepted: a liar costs at most 10 refusals (issue 26), a dialect that
// changes on every answer at most 5, all counted at the server. No reset
// value stalls the client (issue 26): on virtual time, while the client
// has requests to send, no two of them arrive at the server further apart
// than one real window plus the largest Retry-After seen, plus the hold
// of a boundary check (liarStallBound); at least half the ideal of the
// time not paused by a Retry-After is accepted.
func TestLearnLiars(t *testing.T) {
	const n, workers, run = 10, 4, 4 * time.Second
	for _, c := range liarCases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
				srv := &slidingLogServer{n: n, window: time.Second, header: c.header, retryAfter: c.retryAfter}
				tr, err := httpthrottle.NewTransport(newBucket(t, 1000, time.Second, nil), httpthrottle.WithBase(srv.roundTrip()),
					httpthrottle.OnHeaderError(nil), httpthrottle.WithLearnLimits())
				require.NoError(t, err)
				start := time.Now()
				resumed := start
				var failed atomic.Int64
				if c.idle > 0 {
					// The first window only, then nothing for c.idle.
					ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
					runLiarWorkers(ctx, tr, workers, time.Now().Add(run), &failed)
					cancel()
					failed.Store(0) // the requests the timeout ended
					time.Sleep(time.Until(start.Add(500*time.Millisecond + c.idle)))
					resumed = time.Now()
				}
				runLiarWorkers(context.Background(), tr, workers, resumed.Add(run), &failed)
				srv.mu.Lock()
				defer srv.mu.Unlock()
				busy := srv.arrivals[sort.Search(len(srv.arrivals), func(i int) bool { return !srv.arrivals[i].Before(resumed) }):]
				longest := time.Duration(0)
				prev := resumed
				for _, a := range busy {
					longest, prev = max(longest, a.Sub(prev)), a
				}
				bound := liarStallBound(n, time.Second, c.retryAfter)
				t.Logf("%s: %d accepted, %d refused in %v; the longest gap between arrivals %v (bound %v); last %v",
					c.name, len(srv.accepted), srv.refused, time.Since(start), longest, bound, tr.LearnStats().Last)
				assert.Zero(t, failed.Load())
				assert.LessOrEqual(t, srv.refused, c.maxRefused, "refused")
				assert.LessOrEqual(t, longest, bound, "a stall: no two arrivals at the server further apart than one real window plus the largest Retry-After, plus a boundary check's hold")
				active := run - time.Duration(c.retryAfter)*time.Second
				assert.GreaterOrEqual(t, len(srv.accepted), int(active.Seconds()*n/2), "accepted")
			})
		})
	}
}

// liarStallBound is the longest two arrivals may be apart while the client
// has requests to send, at a server accepting n per window that refuses
// with a Retry-After of retryAfter seconds: one real window plus the
// Retry-After (issue 26), plus the hold of a boundary check (the lone
// request goes one request's share, window/n, into the new window, to
// tell a fixed window from a sliding-window counter; a renewal's check a
// round trip after the spent quota's answer, less than that here).
func liarStallBound(n int, window time.Duration, retryAfter int) time.Duration {
	return window + time.Duration(retryAfter)*time.Second + window/time.Duration(n)
}

// slidingLogServer accepts n per window, a sliding log of the arrivals it
// accepted, answering a millisecond after each arrival with header's
// fields (given the instant and how many of the window it then holds) and
// on a refusal a Retry-After of retryAfter seconds if not 0. Its arrivals
// come a millisecond after the request is sent.
type slidingLogServer struct {
	n          int
	window     time.Duration
	header     func(now time.Time, used int) http.Header
	retryAfter int

	mu       sync.Mutex
	accepted []time.Time
	arrivals []time.Time
	refused  int
}

func (s *slidingLogServer) roundTrip() roundTripFunc {
	return func(req *http.Request) (*http.Response, error) {
		readBody(req)
		time.Sleep(time.Millisecond)
		s.mu.Lock()
		now := time.Now()
		s.arrivals = append(s.arrivals, now)
		in := 0
		for i := len(s.accepted) - 1; i >= 0 && now.Sub(s.accepted[i]) < s.window; i-- {
			in++
		}
		status := http.StatusOK
		if in >= s.n {
			status, s.refused = http.StatusTooManyRequests, s.refused+1
		} else {
			s.accepted = append(s.accepted, now)
			in++
		}
		h := s.header(now, in)
		if status == http.StatusTooManyRequests && s.retryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(s.retryAfter))
		}
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		return respond(req, status, h), nil
	}
}

// runLiarWorkers sends requests from workers goroutines until end or
// ctx's end, counting the errors other than ctx's in failed.
func runLiarWorkers(ctx context.Context, tr http.RoundTripper, workers int, end time.Time, failed *atomic.Int64) {
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					return
				}
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}
