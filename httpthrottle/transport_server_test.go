package httpthrottle_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// These tests talk to real net/http servers on loopback. Time that matters
// is a clock.Mock shared by the bucket and the Transport (and, for the quota
// test, the server), moved only by the test, so nothing depends on how fast
// the machine is.

var serverNow = time.Date(2026, time.January, 2, 15, 4, 5, 0, time.UTC)

func newMock() *clock.Mock {
	m := clock.NewMock()
	m.Set(serverNow)
	return m
}

func TestTransportServerPushbackHeaders(t *testing.T) {
	date := func(d time.Duration) string { return serverNow.Add(d).Format(http.TimeFormat) }
	unix := func(d time.Duration) string { return strconv.FormatInt(serverNow.Add(d).Unix(), 10) }
	steps := []struct {
		name   string
		status int
		header map[string]string
		pause  time.Duration // 0: no pause
		kinds  []error       // the sentinel of each HeaderError reported
	}{
		{"429 seconds", 429, map[string]string{"Retry-After": "7"}, 7 * time.Second, nil},
		{"503 seconds", 503, map[string]string{"Retry-After": "7"}, 7 * time.Second, nil},
		{"429 HTTP-date", 429, map[string]string{"Retry-After": date(90 * time.Second)}, 90 * time.Second, nil},
		{"429 HTTP-date past", 429, map[string]string{"Retry-After": date(-time.Hour)}, 0, nil},
		{"429 malformed", 429, map[string]string{"Retry-After": "in a bit"}, 0, []error{httpthrottle.ErrMalformedHeader}},
		{"429 negative", 429, map[string]string{"Retry-After": "-30"}, 0, []error{httpthrottle.ErrMalformedHeader}},
		{"429 484,289 hours", 429, map[string]string{"Retry-After": "1743440400"}, httpthrottle.DefaultMaxPause, []error{httpthrottle.ErrPauseCapped}},
		{"429 year 9999", 429, map[string]string{"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, httpthrottle.DefaultMaxPause, []error{httpthrottle.ErrPauseCapped}},
		{"429 without Retry-After", 429, nil, 0, nil},
		{"200 with Retry-After", 200, map[string]string{"Retry-After": "7"}, 0, nil},
		{"302 with Retry-After", 302, map[string]string{"Retry-After": "7", "Location": "/elsewhere"}, 0, nil},
		{"X-RateLimit spent, Unix reset", 200, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": unix(45 * time.Second)}, 45 * time.Second, nil},
		{"X-RateLimit spent, delta reset", 200, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "45"}, 45 * time.Second, nil},
		{"X-RateLimit left", 200, map[string]string{"X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "45"}, 0, nil},
		{"X-RateLimit spent, no reset", 200, map[string]string{"X-RateLimit-Remaining": "0"}, 0, []error{httpthrottle.ErrMalformedHeader}},
		{"draft RateLimit-Reset", 200, map[string]string{"RateLimit-Limit": "10", "RateLimit-Remaining": "0", "RateLimit-Reset": "12"}, 12 * time.Second, nil},
		{"RateLimit structured", 200, map[string]string{"RateLimit": `"default";r=0;t=30`, "RateLimit-Policy": `"default";q=100;w=60`}, 30 * time.Second, nil},
		{"RateLimit structured, window from policy", 200, map[string]string{"RateLimit": `"default";r=0`, "RateLimit-Policy": `"default";q=100;w=60`}, time.Minute, nil},
		{"RateLimit left", 200, map[string]string{"RateLimit": `"default";r=7;t=30`}, 0, nil},
		{"429 Retry-After and a later reset: the later wins", 429, map[string]string{"Retry-After": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60"}, time.Minute, nil},
		// Resets beyond any time.Time or float64's exact integers are no
		// plausible reset in any unit (issue 26): reported and ignored,
		// never read as the past (issue 10, item 10) nor as a pause to
		// the cap (a stall of the maximum pause at every answer).
		{"X-RateLimit-Reset MaxInt64", 200, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "9223372036854775807"}, 0, []error{httpthrottle.ErrMalformedHeader}},
		{"X-RateLimit-Reset 1e20", 200, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "99999999999999999999"}, 0, []error{httpthrottle.ErrMalformedHeader}},
		{"RateLimit-Reset MaxInt64", 200, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": "9223372036854775807"}, 0, []error{httpthrottle.ErrMalformedHeader}},
		{"quota reset beyond the cap", 200, map[string]string{"RateLimit": `"day";r=0;t=86400`}, httpthrottle.DefaultMaxPause, []error{httpthrottle.ErrPauseCapped}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				for k, v := range s.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(s.status)
			}))
			defer srv.Close()
			mock := newMock()
			spy := &spyLimiter{Limiter: newBucket(t, 10, time.Second, mock)}
			var pushbacks []time.Time
			var reports []*httpthrottle.HeaderError
			var mu sync.Mutex
			tr, err := httpthrottle.NewTransport(spy,
				httpthrottle.WithBase(srv.Client().Transport),
				httpthrottle.WithClock(mock),
				httpthrottle.WithMaxAttempts(1), // one response's headers: a 429's retry would wait on the mock clock
				httpthrottle.OnPushback(func(status int, until time.Time) {
					assert.Equal(t, s.status, status)
					mu.Lock()
					pushbacks = append(pushbacks, until)
					mu.Unlock()
				}),
				httpthrottle.OnHeaderError(func(e *httpthrottle.HeaderError) {
					mu.Lock()
					reports = append(reports, e)
					mu.Unlock()
				}))
			require.NoError(t, err)
			client := &http.Client{
				Transport:     tr,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			}
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			assert.Equal(t, s.status, resp.StatusCode)
			assert.Equal(t, int32(1), hits.Load())

			if s.pause > 0 {
				want := []time.Duration{s.pause}
				assert.Equal(t, want, since(serverNow, spy.Pauses()), "Pause calls")
				assert.Equal(t, want, since(serverNow, pushbacks), "OnPushback calls")
				assert.Equal(t, uint64(1), tr.Stats().Pushbacks)
			} else {
				assert.Empty(t, spy.Pauses(), "Pause calls")
				assert.Empty(t, pushbacks, "OnPushback calls")
			}
			require.Len(t, reports, len(s.kinds), "reports: %v", reports)
			for i, kind := range s.kinds {
				assert.ErrorIs(t, reports[i], kind)
			}
			assert.Equal(t, uint64(len(s.kinds)), tr.Stats().HeaderErrors)
		})
	}
}

// since returns each instant as an offset from start (comparing offsets
// ignores the Location a time.Time carries).
func since(start time.Time, ts []time.Time) []time.Duration {
	var out []time.Duration
	for _, at := range ts {
		out = append(out, at.Sub(start))
	}
	return out
}

func TestTransportServerNeverExceedsQuota(t *testing.T) {
	const n, w, workers, each = 4, time.Second, 12, 2
	const total = workers * each
	mock := newMock()
	var (
		mu       sync.Mutex
		arrivals []time.Duration // mock time since serverNow
		refused  int
	)
	// The server enforces the quota itself on the shared mock clock: a
	// request that would be the (n+1)-th in a window of w is refused.
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		now := mock.Now().Sub(serverNow)
		mu.Lock()
		defer mu.Unlock()
		inWindow := 0
		for _, a := range arrivals {
			if now-a < w {
				inWindow++
			}
		}
		if inWindow >= n {
			refused++
			rw.WriteHeader(http.StatusTooManyRequests)
			return
		}
		arrivals = append(arrivals, now)
	}))
	defer srv.Close()
	arrived := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(arrivals) + refused
	}

	b := newBucket(t, n, w, mock)
	tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(srv.Client().Transport), httpthrottle.WithClock(mock))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	var answered atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				resp, err := client.Get(srv.URL)
				if assert.NoError(t, err) {
					assert.Equal(t, http.StatusOK, resp.StatusCode)
					resp.Body.Close()
				}
				answered.Add(1)
			}
		})
	}
	// Let each window's n requests reach the server and their answers come
	// back (the Transport releases each token when its answer is here,
	// reading the mock) before time moves on, so that neither the arrival
	// order nor the renewals can be blurred by scheduling.
	for round := 1; round <= total/n; round++ {
		require.Eventually(t, func() bool { return arrived() >= round*n && answered.Load() >= int32(round*n) }, 10*time.Second, time.Millisecond,
			"round %d: %d requests arrived, %d answered", round, arrived(), answered.Load())
		if round < total/n {
			mock.Add(w)
		}
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	assert.Zero(t, refused, "requests the server refused")
	require.Len(t, arrivals, total)
	for i, a := range arrivals {
		assert.Equal(t, time.Duration(i/n)*w, a, "arrival %d", i)
	}
}

func TestTransportServerRetryReplaysBody(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		first := len(bodies) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"message":"slow down"}`)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
		httpthrottle.WithBase(srv.Client().Transport), httpthrottle.WithMaxAttempts(2))
	require.NoError(t, err)

	payload := bytes.Repeat([]byte("0123456789"), 1000)
	resp, err := (&http.Client{Transport: tr}).Post(srv.URL, "application/octet-stream", bytes.NewReader(payload))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", string(got))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{string(payload), string(payload)}, bodies)
}

func TestTransportServerNoRetryForOneShotBody(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
		httpthrottle.WithBase(srv.Client().Transport), httpthrottle.WithMaxAttempts(3))
	require.NoError(t, err)
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte("streamed"))
		_ = pw.Close()
	}()
	resp, err := (&http.Client{Transport: tr}).Post(srv.URL, "text/plain", pr)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, int32(1), hits.Load())
}

func TestTransportServerCancel(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	mock := newMock()
	b := newBucket(t, 1, time.Hour, mock)
	tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(srv.Client().Transport), httpthrottle.WithClock(mock))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}

	// Cancelled before it starts: no token, no request.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	require.NoError(t, err)
	_, err = client.Do(req)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, hits.Load())
	assert.Equal(t, 1, b.Stats().Free, "the token is still free")

	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()

	// Cancelled while waiting for the next token (an hour away on the mock).
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		_, err := client.Do(req)
		errc <- err
	}()
	require.Eventually(t, func() bool { return b.Stats().Queued == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	assert.Equal(t, int32(1), hits.Load())
	assert.Equal(t, 0, b.Stats().Queued)
	assert.Equal(t, uint64(2), tr.Stats().Cancelled)
}
