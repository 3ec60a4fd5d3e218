package httpthrottle_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
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

// flakyBase refuses the first refusals requests with 429 and Retry-After:
// retryAfter, then answers 200. It records each call's instant and body, and
// hands out response bodies that record being closed.
type flakyBase struct {
	refusals   int
	retryAfter string
	mu         sync.Mutex
	bodies     []string
	rec        recorder
	respBodies []*closeTracker
}

func (f *flakyBase) RoundTrip(r *http.Request) (*http.Response, error) {
	f.rec.add("", time.Now())
	body := readBody(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, body)
	status := http.StatusOK
	h := http.Header{}
	if len(f.bodies) <= f.refusals {
		status = http.StatusTooManyRequests
		if f.retryAfter != "" {
			h.Set("Retry-After", f.retryAfter)
		}
	}
	resp := respond(r, status, h)
	rb := &closeTracker{Reader: strings.NewReader(strings.Repeat("x", 100))}
	resp.Body = rb
	f.respBodies = append(f.respBodies, rb)
	return resp, nil
}

func (f *flakyBase) Bodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bodies...)
}

func TestTransportRetryReplaysBody(t *testing.T) {
	bodies := []struct {
		name string
		body func() io.Reader
		want string
	}{
		{"strings.Reader", func() io.Reader { return strings.NewReader(`{"job":1}`) }, `{"job":1}`},
		{"bytes.Buffer", func() io.Reader { return bytes.NewBufferString(`{"job":2}`) }, `{"job":2}`},
		{"no body", func() io.Reader { return nil }, ""},
		{"http.NoBody", func() io.Reader { return http.NoBody }, ""},
	}
	for _, s := range bodies {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &flakyBase{refusals: 2, retryAfter: "2"}
				tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
					httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(3))
				require.NoError(t, err)
				start := time.Now()
				resp, err := (&http.Client{Transport: tr}).Post("http://api.test/jobs", "application/json", s.body())
				require.NoError(t, err)
				defer resp.Body.Close()

				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, []string{s.want, s.want, s.want}, base.Bodies(), "the same body every attempt")
				// Each retry waited out the pause its 429 caused.
				assert.Equal(t, []time.Duration{0, 2 * time.Second, 4 * time.Second}, base.rec.offsets("", start))
				assert.True(t, base.respBodies[0].closed.Load(), "refused response 1 closed")
				assert.True(t, base.respBodies[1].closed.Load(), "refused response 2 closed")
				st := tr.Stats()
				assert.Equal(t, uint64(2), st.Retries)
				assert.Equal(t, uint64(3), st.Sent)
				assert.Equal(t, uint64(2), st.Pushbacks)
			})
		})
	}
}

func TestTransportRetryGivesUpAfterMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &flakyBase{refusals: 100, retryAfter: "1"}
		tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
			httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(3))
		require.NoError(t, err)
		start := time.Now()
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the last 429 comes back as it is")
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Len(t, b, 100, "its body is intact")
		resp.Body.Close()
		assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, base.rec.offsets("", start))
		assert.Equal(t, uint64(2), tr.Stats().Retries)
	})
}

// By default a 429 of a request whose body can be sent again is retried
// after its pause, up to DefaultMaxAttempts attempts in all (one default
// for every adapter, attempt.DefaultMaxAttempts); WithMaxAttempts(1)
// returns it to the caller.
func TestTransportRetriesByDefault(t *testing.T) {
	assert.Equal(t, 3, httpthrottle.DefaultMaxAttempts)
	for _, tc := range []struct {
		name     string
		opts     []httpthrottle.TransportOption
		refusals int
		status   int
		offsets  []time.Duration
	}{
		{"default, one refusal", nil, 1, http.StatusOK, []time.Duration{0, time.Second}},
		{"default, refused throughout", nil, 100, http.StatusTooManyRequests, []time.Duration{0, time.Second, 2 * time.Second}},
		{"WithMaxAttempts(1)", []httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(1)}, 1, http.StatusTooManyRequests, []time.Duration{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &flakyBase{refusals: tc.refusals, retryAfter: "1"}
				tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil), append(tc.opts, httpthrottle.WithBase(base))...)
				require.NoError(t, err)
				start := time.Now()
				resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, tc.status, resp.StatusCode)
				assert.Equal(t, tc.offsets, base.rec.offsets("", start))
				assert.Equal(t, uint64(len(tc.offsets)-1), tr.Stats().Retries)
			})
		})
	}
}

func TestTransportNoRetryWhenBodyCannotBeReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &flakyBase{refusals: 1, retryAfter: "1"}
		tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
			httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(5))
		require.NoError(t, err)
		// A reader http.NewRequest does not know gets no GetBody: once sent,
		// the body is gone, so the 429 must reach the caller.
		req := mustRequest(t, context.Background(), "POST", io.MultiReader(strings.NewReader("once")))
		require.Nil(t, req.GetBody)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, []string{"once"}, base.Bodies())
		assert.False(t, base.respBodies[0].closed.Load(), "the caller owns the returned body")
		assert.Zero(t, tr.Stats().Retries)
	})
}

func TestTransportRetryGetBodyFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &flakyBase{refusals: 1}
		tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
			httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(2))
		require.NoError(t, err)
		req := mustRequest(t, context.Background(), "PUT", strings.NewReader("data"))
		boom := errors.New("boom")
		req.GetBody = func() (io.ReadCloser, error) { return nil, boom }
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, boom)
		assert.EqualError(t, err, "httpthrottle: replaying the body of PUT http://api.test/jobs for a retry: boom")
		assert.True(t, base.respBodies[0].closed.Load())
	})
}

func TestTransportRetryCancelledDuringPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &flakyBase{refusals: 1, retryAfter: "60"}
		tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
			httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(2))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var getBodies atomic.Int32
		req := mustRequest(t, ctx, "POST", strings.NewReader("data"))
		getBody := req.GetBody
		req.GetBody = func() (io.ReadCloser, error) { getBodies.Add(1); return getBody() }
		start := time.Now()
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		// The pause ends after the deadline: the retry is refused at once.
		require.ErrorIs(t, err, rxthrottle.ErrDeadline)
		assert.Zero(t, time.Since(start))
		assert.Len(t, base.Bodies(), 1)
		assert.Zero(t, getBodies.Load(), "no body is opened for a retry that never goes")
	})
}

func TestTransportKeyedPausesOnlyTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		var refused atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			rec.add(r.URL.Host, time.Now())
			if r.URL.Host == "a.test" && refused.CompareAndSwap(false, true) {
				return respond(r, http.StatusTooManyRequests, http.Header{"Retry-After": {"10"}}), nil
			}
			return respond(r, http.StatusOK, nil), nil
		})
		kl := newKeyed(t, 2, time.Second)
		// WithMaxAttempts(1): the 429 comes back at once, so that the others
		// start at 0 (by default its retry would make the first get itself
		// wait out the pause).
		tr, err := httpthrottle.NewKeyedTransport(kl, httpthrottle.KeyByHost, httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(1))
		require.NoError(t, err)
		client := &http.Client{Transport: tr}
		start := time.Now()
		get := func(url string) {
			resp, err := client.Get(url)
			if assert.NoError(t, err) {
				resp.Body.Close()
			}
		}
		get("http://a.test/") // 429: a.test paused 10 s
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { get("http://a.test/") })
			wg.Go(func() { get("http://B.TEST/") })
		}
		wg.Wait()
		// a.test: the refused request, then 2 per second after the pause.
		assert.Equal(t, []time.Duration{0, 10 * time.Second, 10 * time.Second, 11 * time.Second, 11 * time.Second}, rec.offsets("a.test", start))
		// b.test never waited for a.test's pause: 2 per second from the start.
		assert.Equal(t, []time.Duration{0, 0, time.Second, time.Second}, rec.offsets("B.TEST", start))
	})
}

func TestTransportKeyFunctionError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			return respond(r, http.StatusOK, nil), nil
		})
		noUser := errors.New("no X-User header")
		keyOf := func(r *http.Request) (string, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return u, nil
			}
			return "", noUser
		}
		tr, err := httpthrottle.NewKeyedTransport(newKeyed(t, 1, time.Second), keyOf, httpthrottle.WithBase(base))
		require.NoError(t, err)
		body := &closeTracker{Reader: strings.NewReader("x")}
		_, err = tr.RoundTrip(mustRequest(t, context.Background(), "POST", body))
		require.ErrorIs(t, err, noUser)
		assert.EqualError(t, err, "httpthrottle: no key for POST http://api.test/jobs: no X-User header")
		assert.True(t, body.closed.Load())
		assert.Zero(t, calls.Load())

		req := mustRequest(t, context.Background(), "GET", nil)
		req.Header.Set("X-User", "ada")
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, int32(1), calls.Load())
	})
}

// failingLimiter is a Limiter whose store is down.
type failingLimiter struct {
	rxthrottle.Limiter // the methods the test does not reach
	err                error
}

func (f failingLimiter) Wait(context.Context) error { return f.err }
func (f failingLimiter) Acquire(context.Context) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, f.err
}
func (f failingLimiter) Pause(time.Time)         {}
func (f failingLimiter) Stats() rxthrottle.Stats { return rxthrottle.Stats{} }

func TestTransportLimiterFailure(t *testing.T) {
	down := errors.New("store unreachable")
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return respond(r, http.StatusOK, nil), nil
	})
	tr, err := httpthrottle.NewTransport(failingLimiter{err: down}, httpthrottle.WithBase(base))
	require.NoError(t, err)
	body := &closeTracker{Reader: strings.NewReader("x")}
	req := mustRequest(t, context.Background(), "POST", body)
	req.URL.User = url.UserPassword("ada", "secret")
	_, err = tr.RoundTrip(req)
	require.ErrorIs(t, err, down)
	assert.EqualError(t, err, "httpthrottle: waiting for a token for POST http://ada:xxxxx@api.test/jobs: store unreachable")
	assert.True(t, body.closed.Load())
	assert.Zero(t, calls.Load())
	assert.Equal(t, uint64(1), tr.Stats().Failed, "the limiter failed: Failed, not Cancelled")
	assert.Zero(t, tr.Stats().Cancelled)
}
