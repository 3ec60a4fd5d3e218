package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxthrottle/rxthrottle"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// inMemory serves the API without a socket, so that run can go inside a
// synctest bubble, where time is virtual and every figure is exact.
func inMemory(h http.Handler) (http.RoundTripper, string, func()) {
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		resp := rec.Result()
		resp.Request = r
		return resp, nil
	})
	return rt, "http://api.example", func() {}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRunVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		cfg := config{items: 12, rate: 5, window: 100 * time.Millisecond, workers: 4, serve: inMemory}
		start := time.Now()
		require.NoError(t, run(t.Context(), &out, cfg))
		// 12 items at 5 per window: windows 0, 1, 2; 24 items: 0..4.
		assert.Equal(t, `API quota: 5 per 100ms; client limit: 5 per 100ms; 12 items per pipeline, 4 workers

1. Range -> Map -> Throttle -> Map(call API) -> Reduce
   jobs: 12 done, 0 refused
   API: 12 served, 0 refused, at most 5 in any 100ms; done in window 2

2. two pipelines -> ThrottleWith(one shared bucket) -> Map(call API) -> Merge -> Reduce
   invoices: 12 done, 0 refused; reports: 12 done, 0 refused
   API: 24 served, 0 refused, at most 5 in any 100ms; done in window 4

3. Range -> Map -> Map(call API through httpthrottle.Transport) -> Reduce
   tasks: 12 done, 0 refused; transport: 12 sent, 0 retried, 0 pushbacks
   API: 12 served, 0 refused, at most 5 in any 100ms; done in window 2

4. Range -> Map -> ThrottleMap(call API, each token held until its answer) -> Reduce
   calls: 12 done, 0 refused
   API: 12 served, 0 refused, at most 5 in any 100ms; done in window 2
`, out.String())
		assert.Equal(t, 1000*time.Millisecond, time.Since(start), "2 + 4 + 2 + 2 windows, no needless waiting")
	})
}

// TestRunVirtualTimeUnthrottledIsRefused checks that the API's quota is
// real: a client limit looser than the quota gets refusals, and the
// Transport retries them after the API's Retry-After.
func TestRunVirtualTimeUnthrottledIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAPI(rxthrottle.Per(2, time.Second))
		base, url, _ := inMemory(a)
		client := &http.Client{Transport: base}
		for i := range 3 {
			resp, err := client.Get(url + "/work/x-" + strconv.Itoa(i))
			require.NoError(t, err)
			resp.Body.Close()
			if i < 2 {
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			} else {
				assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
				assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			}
		}
		time.Sleep(time.Second) // the window has moved on
		resp, err := client.Get(url + "/work/x-3")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		served, refused, most := a.report()
		assert.Equal(t, []int{3, 1, 2}, []int{served, refused, most})
	})
}

var tallyLine = regexp.MustCompile(`(\w+): (\d+) done, (\d+) refused`)

// TestRunLoopback runs the example as main does, on a real loopback server
// and the real clock, smaller and faster. Real networks jitter, so it checks
// only that every item was accounted for; the exact figures are checked on
// virtual time above.
func TestRunLoopback(t *testing.T) {
	var out bytes.Buffer
	cfg := config{items: 6, rate: 3, window: 50 * time.Millisecond, headroom: 10 * time.Millisecond, workers: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, run(ctx, &out, cfg))
	tallies := tallyLine.FindAllStringSubmatch(out.String(), -1)
	require.Len(t, tallies, 5, out.String()) // jobs, invoices, reports, tasks, calls
	for _, m := range tallies {
		done, _ := strconv.Atoi(m[2])
		refused, _ := strconv.Atoi(m[3])
		assert.Equal(t, cfg.items, done+refused, "%s in\n%s", m[0], out.String())
	}
}

func TestRunCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		cfg := config{items: 100, rate: 5, window: 100 * time.Millisecond, workers: 4, serve: inMemory}
		err := run(ctx, &bytes.Buffer{}, cfg)
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "context deadline exceeded"), "%v", err)
	})
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	cfg, err := parseFlags(nil, &stderr)
	require.NoError(t, err)
	assert.Equal(t, config{items: 12, rate: 5, window: 100 * time.Millisecond, headroom: 20 * time.Millisecond, workers: 4}, cfg)

	cfg, err = parseFlags([]string{"-items", "3", "-rate", "2", "-window", "1s", "-headroom", "0s", "-workers", "1"}, &stderr)
	require.NoError(t, err)
	assert.Equal(t, config{items: 3, rate: 2, window: time.Second, workers: 1}, cfg)

	stderr.Reset()
	_, err = parseFlags([]string{"-h"}, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, stderr.String(), "Starts a local API that allows -rate requests per -window")
	assert.Contains(t, stderr.String(), "-headroom duration")

	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"-items", "0"}, "pipeline: -items 0: at least 1 item is needed"},
		{[]string{"-rate", "-1"}, "pipeline: -rate -1: the quota must allow at least 1 request"},
		{[]string{"-window", "0s"}, "pipeline: -window 0s: the window must be positive"},
		{[]string{"-headroom", "-1ms"}, "pipeline: -headroom -1ms: must not be negative"},
		{[]string{"-workers", "0"}, "pipeline: -workers 0: at least 1 worker is needed"},
		{[]string{"extra"}, `pipeline: unexpected argument "extra"`},
	} {
		stderr.Reset()
		_, err := parseFlags(s.args, &stderr)
		assert.EqualError(t, err, s.want, "%v", s.args)
		assert.Contains(t, stderr.String(), s.want)
	}
	_, err = parseFlags([]string{"-window", "soon"}, &stderr)
	assert.Error(t, err)
}
