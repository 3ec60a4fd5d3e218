package httpthrottle_test

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxthrottle/rxthrottle"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// roundTripFunc is a base RoundTripper made of a function: the fake server
// of the virtual-time tests, where no socket may block the bubble.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// respond builds the response a fake base returns.
func respond(req *http.Request, status int, header http.Header) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode: status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  header,
		Body:    io.NopCloser(strings.NewReader(http.StatusText(status))),
		Request: req,
	}
}

// readBody reads and closes a request body as a real transport would.
func readBody(req *http.Request) string {
	if req.Body == nil {
		return ""
	}
	defer req.Body.Close()
	b, _ := io.ReadAll(req.Body)
	return string(b)
}

// newBucket is NewBucket(Per(n, w)) on clk (the real clock when nil, which
// is virtual inside a synctest bubble).
func newBucket(t *testing.T, n int, w time.Duration, clk clock.Clock) *rxthrottle.Bucket {
	t.Helper()
	var opts []rxthrottle.Option
	if clk != nil {
		opts = append(opts, rxthrottle.WithClock(clk))
	}
	b, err := rxthrottle.NewBucket(rxthrottle.Per(n, w), opts...)
	require.NoError(t, err)
	return b
}

// spyLimiter is a real Limiter that also records every Pause.
type spyLimiter struct {
	rxthrottle.Limiter
	mu     sync.Mutex
	pauses []time.Time
}

func (s *spyLimiter) Pause(until time.Time) {
	s.mu.Lock()
	s.pauses = append(s.pauses, until)
	s.mu.Unlock()
	s.Limiter.Pause(until)
}

func (s *spyLimiter) Pauses() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.pauses...)
}

// newKeyed is NewKeyed(Per(n, w)) on the real clock (virtual in a bubble).
func newKeyed(t *testing.T, n int, w time.Duration) *rxthrottle.Keyed {
	t.Helper()
	k, err := rxthrottle.NewKeyed(rxthrottle.Per(n, w))
	require.NoError(t, err)
	return k
}

// recorder collects the virtual instants at which a fake base was called.
type recorder struct {
	mu    sync.Mutex
	times map[string][]time.Time // by label (host, or "" for all)
}

func (r *recorder) add(label string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.times == nil {
		r.times = map[string][]time.Time{}
	}
	r.times[label] = append(r.times[label], at)
}

// offsets returns label's call times as offsets from start, sorted.
func (r *recorder) offsets(label string, start time.Time) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, at := range r.times[label] {
		out = append(out, at.Sub(start))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// requireWindow fails unless at most n of the sorted times fall in any
// half-open window of length w: the (i+n)-th is at least w after the i-th.
func requireWindow(t *testing.T, times []time.Duration, n int, w time.Duration) {
	t.Helper()
	for i := 0; i+n < len(times); i++ {
		require.GreaterOrEqual(t, times[i+n]-times[i], w,
			"requests %d and %d are %v apart: more than %d in a window of %v", i, i+n, times[i+n]-times[i], n, w)
	}
}
