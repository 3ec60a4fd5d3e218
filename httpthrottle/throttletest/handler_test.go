package throttletest_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var start = time.Date(2026, time.January, 2, 15, 4, 5, 0, time.UTC)

// step is one request at an offset from start, and the answer it must get.
type step struct {
	at    time.Duration
	wait  time.Duration // 0: accepted; otherwise the exact Retry-After
	after string        // the Retry-After header of a refusal
}

// runSteps sends each step's request to h at its instant on the mock clock
// and checks the answer, the log and the counters.
func runSteps(t *testing.T, h *throttletest.Handler, mock *clock.Mock, steps []step) {
	t.Helper()
	var accepted, refused int
	for i, s := range steps {
		mock.Set(start.Add(s.at))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/items?token=x", nil))
		if s.wait == 0 {
			accepted++
			assert.Equal(t, http.StatusOK, rec.Code, "step %d (at %v): status", i, s.at)
			assert.Equal(t, "ok\n", rec.Body.String(), "step %d: body", i)
			continue
		}
		refused++
		assert.Equal(t, http.StatusTooManyRequests, rec.Code, "step %d (at %v): status", i, s.at)
		assert.Equal(t, s.after, rec.Header().Get("Retry-After"), "step %d: Retry-After", i)
		exact, err := time.ParseDuration(rec.Header().Get(throttletest.ExactRetryAfterHeader) + "s")
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, s.wait, exact, "step %d: %s", i, throttletest.ExactRetryAfterHeader)
	}
	log := h.Log()
	require.Len(t, log, len(steps))
	for i, s := range steps {
		assert.Equal(t, s.at, log[i].At.Sub(start), "log %d: At", i)
		assert.Equal(t, s.wait == 0, log[i].Accepted, "log %d: Accepted", i)
		assert.Equal(t, s.wait, log[i].RetryAfter, "log %d: RetryAfter", i)
		assert.Equal(t, "GET", log[i].Method)
		assert.Equal(t, "/v1/items", log[i].Path)
	}
	assert.Equal(t, throttletest.Stats{Accepted: accepted, Refused: refused}, h.Stats())
}

func newMock() *clock.Mock {
	m := clock.NewMock()
	m.Set(start)
	return m
}

func TestHandlerSlidingLog(t *testing.T) {
	ms := time.Millisecond
	mock := newMock()
	h, err := throttletest.NewHandler(rxthrottle.Per(3, time.Second), throttletest.WithClock(mock))
	require.NoError(t, err)
	runSteps(t, h, mock, []step{
		{at: 0}, {at: 100 * ms}, {at: 100 * ms},
		// Full until the arrival at 0 leaves the window, at 1 s.
		{at: 100 * ms, wait: 900 * ms, after: "1"},
		{at: 999*ms + 999_999, wait: 1, after: "1"},
		// Refusals do not count: the window is half-open, so at exactly
		// 1 s the first arrival has left it.
		{at: time.Second},
		{at: time.Second + 1, wait: 100*ms - 1, after: "1"},
		{at: 1100 * ms}, {at: 1100 * ms},
		{at: 1100 * ms, wait: 900 * ms, after: "1"},
	})
}

func TestHandlerSeveralLimits(t *testing.T) {
	s := time.Second
	mock := newMock()
	h, err := throttletest.NewHandler(rxthrottle.Per(2, s), throttletest.WithClock(mock),
		throttletest.WithLimit(rxthrottle.Per(3, 10*s)))
	require.NoError(t, err)
	runSteps(t, h, mock, []step{
		{at: 0}, {at: 0},
		{at: 500 * time.Millisecond, wait: 500 * time.Millisecond, after: "1"},
		{at: s},
		// 2 per second allows it, 3 per 10 s does not: wait until the
		// arrival at 0 leaves the 10 s window.
		{at: 2 * s, wait: 8 * s, after: "8"},
		{at: 9*s + 300*time.Millisecond, wait: 700 * time.Millisecond, after: "1"},
		{at: 10 * s}, {at: 10 * s}, {at: 10 * s, wait: s, after: "1"},
	})
}

func TestHandlerWrappedHandler(t *testing.T) {
	var calls int
	h, err := throttletest.NewHandler(rxthrottle.Per(1, time.Hour),
		throttletest.WithHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			w.WriteHeader(http.StatusCreated)
		})))
	require.NoError(t, err)
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/", nil))
	}
	assert.Equal(t, 1, calls, "a refused request never reaches the wrapped handler")
}

func TestHandlerConcurrent(t *testing.T) {
	const n, w, goroutines, each = 5, 50 * time.Millisecond, 8, 40
	h, err := throttletest.NewHandler(rxthrottle.Per(n, w))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
				time.Sleep(time.Millisecond)
			}
		})
	}
	wg.Wait()
	log := h.Log()
	require.Len(t, log, goroutines*each)
	var acc []time.Time
	for i, a := range log {
		if i > 0 {
			require.False(t, a.At.Before(log[i-1].At), "the log is in arrival order")
		}
		if a.Accepted {
			acc = append(acc, a.At)
		}
	}
	for i := 0; i+n < len(acc); i++ {
		require.GreaterOrEqual(t, acc[i+n].Sub(acc[i]), w, "more than %d accepted in a window", n)
	}
	st := h.Stats()
	assert.Equal(t, len(acc), st.Accepted)
	assert.Equal(t, goroutines*each, st.Accepted+st.Refused)
	assert.Positive(t, st.Refused, "the load was above the quota")
}

func TestRoundTripOnVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delays := []time.Duration{30 * time.Millisecond, 0, 10 * time.Millisecond}
		var mu sync.Mutex
		next := func() time.Duration {
			mu.Lock()
			defer mu.Unlock()
			d := delays[0]
			delays = delays[1:]
			return d
		}
		h, err := throttletest.NewHandler(rxthrottle.Per(1, time.Second), throttletest.WithLatencyFunc(next))
		require.NoError(t, err)
		client := &http.Client{Transport: h}
		t0 := time.Now()
		var statuses []int
		for range 2 {
			resp, err := client.Get("http://api.test/")
			require.NoError(t, err)
			resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
		}
		assert.Equal(t, []int{200, 429}, statuses)
		log := h.Log()
		assert.Equal(t, 30*time.Millisecond, log[0].At.Sub(t0))
		assert.Equal(t, 30*time.Millisecond, log[1].At.Sub(t0))
		assert.Equal(t, time.Second, log[1].RetryAfter)

		// A context that ends during the latency: the request never arrives.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)
		require.NoError(t, err)
		_, err = client.Do(req)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Len(t, h.Log(), 2)
	})
}

func TestBadInput(t *testing.T) {
	steps := []struct {
		name  string
		limit rxthrottle.Limit
		opts  []throttletest.Option
		msg   string
	}{
		{"N 0", rxthrottle.Per(0, time.Second), nil, "throttletest: limit 0 per 1s: N must be at least 1: invalid limit"},
		{"window 0", rxthrottle.Per(1, 0), nil, "throttletest: limit 1 per 0s: Window must be positive: invalid limit"},
		{"second limit", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithLimit(rxthrottle.Per(-1, time.Second))}, "throttletest: limit -1 per 1s: N must be at least 1: invalid limit"},
		{"nil option", rxthrottle.Per(1, time.Second), []throttletest.Option{nil}, "throttletest: nil Option"},
		{"nil handler", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithHandler(nil)}, "throttletest: WithHandler(nil): a handler is required"},
		{"nil clock", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithClock(nil)}, "throttletest: WithClock(nil): a clock is required"},
		{"negative latency", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithLatency(-time.Second)}, "throttletest: WithLatency(-1s): the latency must not be negative"},
		{"nil latency func", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithLatencyFunc(nil)}, "throttletest: WithLatencyFunc(nil): a function is required"},
		{"nil drop func", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithDropFunc(nil)}, "throttletest: WithDropFunc(nil): a function is required"},
		{"drop rate above 1", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithDropRate(1.5)}, "throttletest: WithDropRate(1.5): the rate must be from 0 to 1"},
		{"drop rate NaN", rxthrottle.Per(1, time.Second), []throttletest.Option{throttletest.WithDropRate(math.NaN())}, "throttletest: WithDropRate(NaN): the rate must be from 0 to 1"},
	}
	for _, s := range steps {
		_, err := throttletest.NewHandler(s.limit, s.opts...)
		assert.EqualError(t, err, s.msg, s.name)
		_, err = throttletest.NewServer(s.limit, s.opts...)
		assert.EqualError(t, err, s.msg, s.name)
	}
	_, err := throttletest.NewHandler(rxthrottle.Per(0, time.Second))
	assert.True(t, errors.Is(err, rxthrottle.ErrInvalidLimit))
	// An option NewHandler does not read is an error, not ignored.
	h, err := throttletest.NewHandler(rxthrottle.Per(1, time.Second), throttletest.WithFreshConnections())
	assert.EqualError(t, err, "throttletest: NewHandler does not read WithFreshConnections: it is an option of NewServer (a Handler makes no connections)")
	assert.Nil(t, h)
}
