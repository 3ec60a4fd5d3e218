package httpthrottle_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// A timed-out attempt kept open behind its retry (by default): its
// late answer is the call's if it comes before the retry goes, and the
// retry is never sent (SPEC.md, "Requests on the wire"). Per(1, 1s): the
// retry waits for the one token, which the timed-out attempt holds until
// its late answer; the next request then arrives 1 s after that answer,
// not after the 2 s bound.

// lateBase answers its first call after late with first, every other at
// once with 200 "retry"; each call writes its request.
func lateBase(t *testing.T, late time.Duration, first func(*http.Request) *http.Response) *wireBase {
	return &wireBase{script: func(i int, w *wireCalls) (*http.Response, error) {
		w.conn(&fakeConn{})
		require.NoError(t, w.write(nil))
		if i > 0 {
			resp := respond(w.req, http.StatusOK, nil)
			resp.Body = io.NopCloser(strings.NewReader("retry"))
			return resp, nil
		}
		if err := w.wait(late); err != nil {
			return nil, err
		}
		return first(w.req), nil
	}}
}

// lateTransport is a Transport over Per(n, 1s) with an attempt timeout of
// 100 ms and a bound of 2 s, and the default attempts (DefaultMaxAttempts,
// 3): the retries of timed-out GETs here are the default's.
func lateTransport(t *testing.T, base http.RoundTripper, n int, opts ...httpthrottle.TransportOption) *httpthrottle.Transport {
	t.Helper()
	opts = append([]httpthrottle.TransportOption{httpthrottle.WithBase(base),
		httpthrottle.WithAttemptTimeout(100 * time.Millisecond), httpthrottle.WithInFlightBound(2 * time.Second),
		httpthrottle.OnHeaderError(nil)}, opts...)
	tr, err := httpthrottle.NewTransport(newBucket(t, n, time.Second, nil), opts...)
	require.NoError(t, err)
	return tr
}

func TestTransportLateAnswerIsTheCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := lateBase(t, 250*time.Millisecond, func(r *http.Request) *http.Response {
			resp := respond(r, http.StatusOK, nil)
			resp.Body = io.NopCloser(strings.NewReader("late"))
			return resp
		})
		tr := lateTransport(t, base, 1)
		start := time.Now()
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		assert.Equal(t, 250*time.Millisecond, time.Since(start), "answered at the late answer")
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, "late", string(b))
		assert.Equal(t, "/jobs", resp.Request.URL.Path)

		resp, err = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, []time.Duration{0, 1250 * time.Millisecond}, base.rec.offsets("arrivals", start),
			"the retry was never sent; the token came back 1 s after the late answer, not after the bound")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, httpthrottle.TransportStats{Sent: 2, Attempts: 2, Cancelled: 1, AttemptTimeouts: 1,
			ErrorsAfterWrite: 1, HeldPastError: 1, LateAnswers: 1, RetriesAnsweredLate: 1}, tr.Stats())
	})
}

// When the retry gets its token before the late answer, the retry goes and
// its answer is the call's; the late one is read and thrown away, and its
// token still released at it.
func TestTransportRetryBeforeLateAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := &countingBody{}
		base := lateBase(t, 250*time.Millisecond, func(r *http.Request) *http.Response {
			resp := respond(r, http.StatusOK, nil)
			resp.Body = body
			return resp
		})
		tr := lateTransport(t, base, 2)
		start := time.Now()
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "the retry went at the timeout and answered at once")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "retry", string(b))
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.True(t, body.closed.Load(), "the late body is read away and closed")
		assert.Equal(t, []time.Duration{0, 100 * time.Millisecond}, base.rec.offsets("arrivals", start))
		assert.Equal(t, httpthrottle.TransportStats{Sent: 2, Attempts: 2, Retries: 1, AttemptTimeouts: 1,
			ErrorsAfterWrite: 1, HeldPastError: 1, LateAnswers: 1}, tr.Stats())
	})
}

// A late 429 pauses the limiter as any answer does, and the waiting retry
// is its retry: it goes when the pause ends.
func TestTransportLateRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := lateBase(t, 250*time.Millisecond, func(r *http.Request) *http.Response {
			return respond(r, http.StatusTooManyRequests, http.Header{"Retry-After": {"2"}})
		})
		tr := lateTransport(t, base, 1)
		start := time.Now()
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "retry", string(b))
		assert.Equal(t, []time.Duration{0, 2250 * time.Millisecond}, base.rec.offsets("arrivals", start),
			"the retry waited out the late 429's pause")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, httpthrottle.TransportStats{Sent: 2, Attempts: 2, Cancelled: 1, Retries: 1, Pushbacks: 1,
			AttemptTimeouts: 1, ErrorsAfterWrite: 1, HeldPastError: 1, LateAnswers: 1}, tr.Stats())
	})
}

// Which timed-out requests are retried: those the server may see twice
// (an idempotent method or an Idempotency-Key, a body that can be sent
// again), while the caller's context lasts; after the last attempt, or
// over the retry budget, the timeout is the call's error.
func TestTransportTimeoutRetries(t *testing.T) {
	never := func(t *testing.T) *wireBase {
		return &wireBase{script: func(_ int, w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			return nil, w.wait(time.Hour)
		}}
	}
	steps := []struct {
		name   string
		req    func(t *testing.T) *http.Request
		opts   []httpthrottle.TransportOption
		calls  int32
		budget uint64
	}{
		{"GET: every attempt", func(t *testing.T) *http.Request { return mustRequest(t, context.Background(), "GET", nil) }, nil, 3, 0},
		{"POST: once", func(t *testing.T) *http.Request {
			return mustRequest(t, context.Background(), "POST", strings.NewReader("x"))
		}, nil, 1, 0},
		{"POST with an Idempotency-Key", func(t *testing.T) *http.Request {
			r := mustRequest(t, context.Background(), "POST", strings.NewReader("x"))
			r.Header.Set("Idempotency-Key", "k1")
			return r
		}, nil, 3, 0},
		{"PUT of a body that cannot be sent again: once", func(t *testing.T) *http.Request {
			r := mustRequest(t, context.Background(), "PUT", strings.NewReader("x"))
			r.GetBody = nil
			return r
		}, nil, 1, 0},
		{"over the retry budget", func(t *testing.T) *http.Request { return mustRequest(t, context.Background(), "GET", nil) },
			[]httpthrottle.TransportOption{httpthrottle.WithRetryBudget(0, 0)}, 1, 1},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := never(t)
				tr := lateTransport(t, base, 10, s.opts...)
				resp, err := tr.RoundTrip(s.req(t))
				require.ErrorIs(t, err, httpthrottle.ErrAttemptTimeout)
				assert.Nil(t, resp)
				assert.Equal(t, s.calls, base.calls.Load())
				assert.Equal(t, s.budget, tr.Stats().RetriesOverBudget)
				time.Sleep(time.Minute) // the bound ends the attempts kept open
				synctest.Wait()
			})
		})
	}
}

// The caller's context bounds the whole call: it ending while the retry
// waits ends the call with the context's error, and a late answer after
// that is read away.
func TestTransportLateAnswerAfterTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := &countingBody{}
		base := lateBase(t, 250*time.Millisecond, func(r *http.Request) *http.Response {
			resp := respond(r, http.StatusOK, nil)
			resp.Body = body
			return resp
		})
		tr := lateTransport(t, base, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := tr.RoundTrip(mustRequest(t, ctx, "GET", nil))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.True(t, body.closed.Load(), "the late body is read away and closed")
		st := tr.Stats()
		assert.Equal(t, uint64(1), st.LateAnswers)
		assert.Zero(t, st.RetriesAnsweredLate)
		assert.Zero(t, st.KeptOpen)
		assert.Zero(t, st.HoldingPastError)
	})
}

// Through ForCall, in a ThrottleMap call: the timed-out attempt goes with
// the call's token, its retry waits for a token of the Limiter, and the
// late answer is fn's; the call's token is released at it, so the next
// item goes 1 s after the late answer.
func TestForCallLateAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := lateBase(t, 250*time.Millisecond, func(r *http.Request) *http.Response {
			resp := respond(r, http.StatusOK, nil)
			resp.Body = io.NopCloser(strings.NewReader("late"))
			return resp
		})
		bucket := newBucket(t, 1, time.Second, nil)
		fn := func(ctx context.Context, _ any) (any, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			if err != nil {
				return nil, rxthrottle.NotSent(err)
			}
			resp, err := httpthrottle.ForCall(ctx, httpthrottle.WithBase(base), httpthrottle.WithAttemptTimeout(100*time.Millisecond),
				httpthrottle.WithMaxAttempts(3), httpthrottle.WithInFlightBound(2*time.Second)).Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		}
		start := time.Now()
		var got []any
		for item := range rxthrottle.ThrottleMapWith(bucket, fn)(rxgo.Just(1, 2)()).Observe() {
			require.NoError(t, item.E)
			got = append(got, item.V)
		}
		assert.Equal(t, []any{"late", "retry"}, got)
		assert.Equal(t, []time.Duration{0, 1250 * time.Millisecond}, base.rec.offsets("arrivals", start),
			"no retry sent; the next item 1 s after the late answer")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Zero(t, bucket.Stats().Held)
	})
}
