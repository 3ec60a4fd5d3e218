package httpthrottle_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// TestLearnCounterVirtual: a learning Transport from a wrong limit, 32
// workers retrying refused requests, calls a sliding-window counter
// (throttletest's, go-chi/httprate's algorithm) that announces its quota
// in each dialect, on virtual time with a round trip of 2 ms, the
// counter's windows starting at several phases of the client's start.
// Where the resets mark the windows (GitHub's Unix seconds, Discord's and
// OpenAI's fractions), the counting is told at a boundary before the
// counter can refuse: nothing is refused. Where they do not (the IETF
// fields' whole seconds from now), it is told when the spent quota renews,
// unless the counter's window is nearly over then; one refused burst at
// most (the quota) is the bound. In every case the window holds at the
// server from the first arrival on, and no arrival comes longer than
// the pause cap after the one before. The time is logged, not asserted.
func TestLearnCounterVirtual(t *testing.T) {
	const n = 10
	cases := []struct {
		dialect    throttletest.Dialect
		maxRefused int
	}{
		{throttletest.DialectGitHub, 0},
		{throttletest.DialectDiscord, 0},
		{throttletest.DialectOpenAI, 0},
		{throttletest.DialectIETF, n},
		{throttletest.DialectIETFDraft, n},
	}
	for _, c := range cases {
		for _, alg := range []throttletest.Algorithm{throttletest.SlidingWindowCounter, throttletest.FixedWindow, throttletest.SlidingLog} {
			for _, phase := range []time.Duration{0, 130 * time.Millisecond, 500 * time.Millisecond, 870 * time.Millisecond, 960 * time.Millisecond} {
				maxRefused := c.maxRefused
				if alg != throttletest.SlidingWindowCounter {
					maxRefused = 0 // the strict window is all a counting server needs
				}
				learnCounterRun(t, c.dialect, alg, phase, maxRefused)
			}
		}
	}
}

// learnCounterRun is one run of TestLearnCounterVirtual.
func learnCounterRun(t *testing.T, dialect throttletest.Dialect, alg throttletest.Algorithm, phase time.Duration, maxRefused int) {
	const n, total, maxPause = 10, 100, 3 * time.Second
	t.Run(dialect.String()+"/"+alg.String()+"/"+phase.String(), func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h, err := throttletest.NewHandler(rxthrottle.Per(n, time.Second),
				throttletest.WithDialect(dialect), throttletest.WithAlgorithm(alg))
			require.NoError(t, err)
			run := virtualLearnLoad(t, h, phase, total, maxPause)
			var times []time.Duration
			for _, a := range h.Log() {
				times = append(times, a.At.Sub(run.start))
			}
			// Until the first reset, the time to it (at least
			// LearnProbeWindow) stands in for the window; from then
			// on the learned window holds.
			requireWindow(t, times, n, time.Second)
			requireNoStall(t, times, maxPause)
			st := h.Stats()
			t.Logf("%v %v, windows from %v: %d accepted, %d refused in %v (%.1f%% of the quota); %d changes, last %v",
				dialect, alg, phase, st.Accepted, st.Refused, run.elapsed, 100*float64(total)/run.elapsed.Seconds()/n, run.events, run.tr.LearnStats().Last)
			require.LessOrEqual(t, st.Refused, maxRefused, "refused by the server")
		})
	})
}

// virtualRun is what one run of virtualLearnLoad saw.
type virtualRun struct {
	start   time.Time
	elapsed time.Duration
	events  int64
	tr      *httpthrottle.Transport
}

// virtualLearnLoad sends total requests from 32 workers, each retrying
// its request until it is not refused, through a learning Transport over
// a Bucket of a wrong limit (1000 per second), to h with a round trip of
// 2 ms. It runs in a synctest bubble, whose clock starts in 2000 on a
// whole second: it first moves to 2026 (Unix seconds before 1e9 read as
// seconds from now), and phase further, so that h's windows start phase
// into the run. opts are added to the Transport's.
func virtualLearnLoad(t *testing.T, h http.Handler, phase time.Duration, total int64, maxPause time.Duration, opts ...httpthrottle.TransportOption) virtualRun {
	return virtualLearnLoadC(t, h, 32, phase, total, maxPause, opts...)
}

// virtualLearnLoadC is virtualLearnLoad from the given number of workers.
func virtualLearnLoadC(t *testing.T, h http.Handler, workers int, phase time.Duration, total int64, maxPause time.Duration, opts ...httpthrottle.TransportOption) virtualRun {
	return virtualLearnLoadL(t, h, workers, time.Millisecond, phase, total, maxPause, opts...)
}

// virtualLearnLoadL is virtualLearnLoadC with a round trip of twice
// oneWay.
func virtualLearnLoadL(t *testing.T, h http.Handler, workers int, oneWay, phase time.Duration, total int64, maxPause time.Duration, opts ...httpthrottle.TransportOption) virtualRun {
	return virtualLearnLoadS(t, h, false, workers, oneWay, phase, total, maxPause, opts...)
}

// virtualLearnLoadS is virtualLearnLoadL, from NewLearningTransport
// (no limit at all) if learning, else from the wrong limit.
func virtualLearnLoadS(t *testing.T, h http.Handler, learning bool, workers int, oneWay, phase time.Duration, total int64, maxPause time.Duration, opts ...httpthrottle.TransportOption) virtualRun {
	time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) + phase)
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		readBody(req)
		time.Sleep(oneWay)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		time.Sleep(oneWay)
		resp := rec.Result()
		resp.Request = req
		return resp, nil
	})
	var events atomic.Int64
	opts = append([]httpthrottle.TransportOption{httpthrottle.WithBase(base),
		httpthrottle.WithMaxPause(maxPause), httpthrottle.OnHeaderError(nil),
		httpthrottle.WithLearnLimits(httpthrottle.OnLearn(func(httpthrottle.LearnEvent) { events.Add(1) }))}, opts...)
	var tr *httpthrottle.Transport
	var err error
	if learning {
		tr, err = httpthrottle.NewLearningTransport(opts...)
	} else {
		tr, err = httpthrottle.NewTransport(newBucket(t, 1000, time.Second, nil), opts...)
	}
	require.NoError(t, err)
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= total {
				for {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	return virtualRun{start: start, elapsed: time.Since(start), events: events.Load(), tr: tr}
}

// requireNoStall fails if two successive arrivals are further apart than
// the pause cap and a window: nothing the server said stalled the client.
func requireNoStall(t *testing.T, times []time.Duration, maxPause time.Duration) {
	t.Helper()
	for i := 1; i < len(times); i++ {
		require.LessOrEqual(t, times[i]-times[i-1], maxPause+time.Second, "arrivals %d and %d are %v apart", i-1, i, times[i]-times[i-1])
	}
}
