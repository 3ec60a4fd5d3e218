package httpthrottle_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// These tests run in synctest bubbles: the bucket and the Transport read the
// real clock, which is virtual there, and the fake base records the instant
// each request reaches it. Time moves only when every goroutine is blocked,
// so the instants are exact.

func TestTransportVirtualNeverExceedsQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, w, workers, each = 5, time.Second, 20, 3
		var rec recorder
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			rec.add("", time.Now())
			readBody(r)
			return respond(r, http.StatusOK, nil), nil
		})
		b := newBucket(t, n, w, nil)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(base))
		require.NoError(t, err)
		client := &http.Client{Transport: tr}
		start := time.Now()

		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range each {
					resp, err := client.Get("http://api.test/items")
					if assert.NoError(t, err) {
						assert.Equal(t, http.StatusOK, resp.StatusCode)
						resp.Body.Close()
					}
				}
			})
		}
		wg.Wait()

		times := rec.offsets("", start)
		require.Len(t, times, workers*each)
		requireWindow(t, times, n, w)
		// No needless waiting: 60 requests at 5 per second go in 12 bursts,
		// the first at once and the last 11 s later.
		assert.Equal(t, time.Duration(0), times[n-1])
		assert.Equal(t, time.Duration(workers*each/n-1)*w, times[len(times)-1])
		assert.Equal(t, uint64(workers*each), tr.Stats().Sent)
		assert.Equal(t, uint64(workers*each), b.Stats().Admitted)
	})
}

// pushbackThenOK answers the first request with status and header, the
// others with 200, and records when each arrived.
func pushbackThenOK(rec *recorder, status int, header func() http.Header) roundTripFunc {
	var calls atomic.Int32
	return func(r *http.Request) (*http.Response, error) {
		rec.add("", time.Now())
		readBody(r)
		if calls.Add(1) == 1 {
			return respond(r, status, header()), nil
		}
		return respond(r, http.StatusOK, nil), nil
	}
}

func TestTransportVirtualPushbackHoldsEveryone(t *testing.T) {
	steps := []struct {
		name   string
		status int
		header func() http.Header
		wait   time.Duration
	}{
		{"429 Retry-After seconds", 429, func() http.Header { return http.Header{"Retry-After": {"3"}} }, 3 * time.Second},
		{"503 Retry-After seconds", 503, func() http.Header { return http.Header{"Retry-After": {"4"}} }, 4 * time.Second},
		{"429 Retry-After date", 429, func() http.Header {
			return http.Header{"Retry-After": {time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)}}
		}, 90 * time.Second},
		{"429 Retry-After huge, capped", 429, func() http.Header { return http.Header{"Retry-After": {"1743440400"}} }, httpthrottle.DefaultMaxPause},
		{"200 X-RateLimit spent, Unix reset", 200, func() http.Header {
			return http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(7*time.Second).Unix(), 10)}}
		}, 7 * time.Second},
		{"200 X-RateLimit spent, seconds reset", 200, func() http.Header {
			return http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"6"}}
		}, 6 * time.Second},
		{"200 RateLimit structured", 200, func() http.Header { return http.Header{"Ratelimit": {`"default";r=0;t=2`}} }, 2 * time.Second},
		{"200 RateLimit-Remaining draft", 200, func() http.Header {
			return http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"5"}}
		}, 5 * time.Second},
		{"429 Retry-After malformed: no pause", 429, func() http.Header { return http.Header{"Retry-After": {"soon"}} }, 0},
		{"429 Retry-After negative: no pause", 429, func() http.Header { return http.Header{"Retry-After": {"-3"}} }, 0},
		{"200 Retry-After: ignored", 200, func() http.Header { return http.Header{"Retry-After": {"3"}} }, 0},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toPresent()
				var rec recorder
				var pushbacks []time.Duration
				var headerErrs atomic.Int32
				start := time.Now()
				// WithMaxAttempts(1): the refusal comes back to the caller, and
				// the pause alone is what the others wait for.
				tr, err := httpthrottle.NewTransport(newBucket(t, 100, time.Second, nil),
					httpthrottle.WithBase(pushbackThenOK(&rec, s.status, s.header)), httpthrottle.WithMaxAttempts(1),
					httpthrottle.OnPushback(func(status int, until time.Time) {
						assert.Equal(t, s.status, status)
						pushbacks = append(pushbacks, until.Sub(start))
					}),
					httpthrottle.OnHeaderError(func(*httpthrottle.HeaderError) { headerErrs.Add(1) }))
				require.NoError(t, err)
				client := &http.Client{Transport: tr}

				resp, err := client.Get("http://api.test/")
				require.NoError(t, err)
				assert.Equal(t, s.status, resp.StatusCode)
				resp.Body.Close()

				// Five more requests from other goroutines all wait for the
				// end of the pause, and go together at that instant.
				var wg sync.WaitGroup
				for range 5 {
					wg.Go(func() {
						resp, err := client.Get("http://api.test/")
						if assert.NoError(t, err) {
							resp.Body.Close()
						}
					})
				}
				wg.Wait()
				times := rec.offsets("", start)
				require.Len(t, times, 6)
				assert.Equal(t, []time.Duration{0, s.wait, s.wait, s.wait, s.wait, s.wait}, times)
				if s.wait > 0 {
					assert.Equal(t, []time.Duration{s.wait}, pushbacks)
				} else {
					assert.Empty(t, pushbacks)
				}
				if strings.Contains(s.name, "malformed") || strings.Contains(s.name, "negative") || strings.Contains(s.name, "capped") {
					assert.Equal(t, int32(1), headerErrs.Load())
				} else {
					assert.Zero(t, headerErrs.Load())
				}
			})
		})
	}
}

func TestTransportVirtualMaxPauseOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		var capped []*httpthrottle.HeaderError
		tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
			httpthrottle.WithBase(pushbackThenOK(&rec, 429, func() http.Header { return http.Header{"Retry-After": {"3600"}} })),
			httpthrottle.WithMaxPause(30*time.Second), httpthrottle.WithMaxAttempts(1), // two calls, no retry
			httpthrottle.OnHeaderError(func(e *httpthrottle.HeaderError) { capped = append(capped, e) }))
		require.NoError(t, err)
		start := time.Now()
		for range 2 {
			resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
			require.NoError(t, err)
			resp.Body.Close()
		}
		assert.Equal(t, []time.Duration{0, 30 * time.Second}, rec.offsets("", start))
		require.Len(t, capped, 1)
		assert.ErrorIs(t, capped[0], httpthrottle.ErrPauseCapped)
		assert.Equal(t, "Retry-After", capped[0].Header)
		assert.Equal(t, "3600", capped[0].Value)
		assert.EqualError(t, capped[0], `httpthrottle: header Retry-After "3600": asks for a pause of 1h0m0s, more than the maximum 30s; pausing 30s`)
	})
}

// toPresent moves a bubble's clock, which starts in 2000, to 2026: Unix
// times in X-RateLimit-Reset are told from delays by being at least 1e9
// (September 2001). The sleep is virtual and takes no real time.
func toPresent() {
	time.Sleep(time.Until(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)))
}

func mustRequest(t *testing.T, ctx context.Context, method string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "http://api.test/jobs", body)
	require.NoError(t, err)
	return req
}

// closeTracker is a request body that records whether it was closed.
type closeTracker struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeTracker) Close() error { c.closed.Store(true); return nil }

func TestTransportVirtualCancelledWaitConsumesNoToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			rec.add("", time.Now())
			readBody(r)
			return respond(r, http.StatusOK, nil), nil
		})
		b := newBucket(t, 1, time.Hour, nil)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(base))
		require.NoError(t, err)
		start := time.Now()

		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		resp.Body.Close()

		// The next token renews in an hour; this request, with a minute to
		// live, is refused at once (its deadline comes before it could
		// go), without reaching the base, and closes its body.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		body := &closeTracker{Reader: strings.NewReader("payload")}
		req := mustRequest(t, ctx, "POST", body)
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, rxthrottle.ErrDeadline)
		assert.Zero(t, time.Since(start))
		assert.True(t, body.closed.Load(), "the request body must be closed")

		// A context that has already ended takes no token either.
		done, cancelNow := context.WithCancel(context.Background())
		cancelNow()
		_, err = tr.RoundTrip(mustRequest(t, done, "GET", nil))
		require.ErrorIs(t, err, context.Canceled)

		// The cancelled requests left the schedule as it was: the next one
		// goes when the first token renews, one hour after the start.
		resp, err = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, []time.Duration{0, time.Hour}, rec.offsets("", start))
		assert.Equal(t, uint64(2), tr.Stats().Cancelled)
		assert.Equal(t, uint64(2), tr.Stats().Sent)
		assert.Equal(t, uint64(2), b.Stats().Admitted)
	})
}

func TestTransportVirtualCancelThroughClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			return respond(r, http.StatusOK, nil), nil
		})
		b := newBucket(t, 1, time.Hour, nil)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(base))
		require.NoError(t, err)
		client := &http.Client{Transport: tr}
		resp, err := client.Get("http://api.test/")
		require.NoError(t, err)
		resp.Body.Close()

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)
			_, err := client.Do(req)
			errc <- err
		}()
		synctest.Wait() // the request is queued in the bucket
		assert.Equal(t, 1, b.Stats().Queued)
		cancel()
		err = <-errc
		require.ErrorIs(t, err, context.Canceled)
		var uerr interface{ Timeout() bool }
		assert.True(t, errors.As(err, &uerr), "http.Client wraps it in a *url.Error")
		assert.Equal(t, int32(1), calls.Load())
		assert.Equal(t, 0, b.Stats().Queued)
	})
}
