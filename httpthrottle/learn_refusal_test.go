package httpthrottle_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

const (
	quotaExceeded   = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","violated-policies":["daily"]}`
	reducedCapacity = `{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"}`
	abnormalUsage   = `{"type":"https://iana.org/assignments/http-problem-types#abnormal-usage-detected"}`
)

// longProblem is a quota-exceeded problem whose detail runs past the
// first 4 KiB the Transport reads of a problem body.
var longProblem = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","detail":"` + strings.Repeat("d", 8<<10) + `"}`

// TestLearnRefusalStatuses: the learner counts as a refusal every answer
// that refuses for the server's rate (429; 503 with or without
// Retry-After; an IETF problem type in a problem+json body, whatever the
// status) and nothing else, and the caller reads a problem body whole.
func TestLearnRefusalStatuses(t *testing.T) {
	cases := []struct {
		name, body, contentType string
		status                  int
		header                  http.Header
		refused                 bool
	}{
		{name: "429", status: http.StatusTooManyRequests, refused: true},
		{name: "503 bare (nginx limit_req)", status: http.StatusServiceUnavailable, refused: true},
		{name: "503 with Retry-After", status: http.StatusServiceUnavailable, header: http.Header{"Retry-After": {"1"}}, refused: true},
		{name: "403 quota-exceeded", status: http.StatusForbidden, body: quotaExceeded, contentType: "application/problem+json", refused: true},
		{name: "400 temporary-reduced-capacity", status: http.StatusBadRequest, body: reducedCapacity, contentType: "application/problem+json; charset=utf-8", refused: true},
		{name: "403 abnormal-usage-detected (draft -11)", status: http.StatusForbidden, body: abnormalUsage, contentType: "application/problem+json", refused: true},
		{name: "403 quota-exceeded, detail past the first 4 KiB", status: http.StatusForbidden, body: longProblem, contentType: "application/problem+json", refused: true},
		{name: "403 other problem", status: http.StatusForbidden, body: `{"type":"about:blank"}`, contentType: "application/problem+json"},
		{name: "403 plain", status: http.StatusForbidden, body: quotaExceeded, contentType: "application/json"},
		{name: "200 problem type", status: http.StatusOK, body: quotaExceeded, contentType: "application/problem+json"},
		{name: "500", status: http.StatusInternalServerError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					resp := respond(req, c.status, c.header.Clone())
					if c.body != "" {
						resp.Header.Set("Content-Type", c.contentType)
						resp.Body = io.NopCloser(strings.NewReader(c.body))
					}
					return resp, nil
				})
				tr, err := httpthrottle.NewLearningTransport(httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil),
					httpthrottle.WithLearnLimits(httpthrottle.LearnMaxAttempts(1)))
				require.NoError(t, err)
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				if c.body != "" {
					assert.Equal(t, c.body, string(body), "the caller reads the body whole")
				}
				want := uint64(0)
				if c.refused {
					want = 1
				}
				assert.Equal(t, want, tr.LearnStats().Refusals)
			})
		})
	}
}

// TestLearnRetriesRefusals: a learning Transport tries a refusal again
// by default (its own probing's, up to DefaultMaxAttempts; a 503 as a
// 429), one without learning too (a 429 only, one default for both:
// issue 30, item 3), WithMaxAttempts(1) or LearnMaxAttempts(1) never, and
// no Transport tries again a refusal the server says not to
// (x-should-retry: false).
func TestLearnRetriesRefusals(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		header   http.Header
		learn    bool
		opts     []httpthrottle.TransportOption
		attempts int64
	}{
		{"429, learning", http.StatusTooManyRequests, nil, true, nil, httpthrottle.DefaultMaxAttempts},
		{"503, learning", http.StatusServiceUnavailable, nil, true, nil, httpthrottle.DefaultMaxAttempts},
		{"429, learning, WithMaxAttempts(5)", http.StatusTooManyRequests, nil, true, []httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(5)}, 5},
		{"429, learning, LearnMaxAttempts(1)", http.StatusTooManyRequests, nil, true, []httpthrottle.TransportOption{httpthrottle.WithLearnLimits(httpthrottle.LearnMaxAttempts(1))}, 1},
		{"429, not learning", http.StatusTooManyRequests, nil, false, nil, httpthrottle.DefaultMaxAttempts},
		{"429, not learning, WithMaxAttempts(1)", http.StatusTooManyRequests, nil, false, []httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(1)}, 1},
		{"429, learning, WithMaxAttempts(1)", http.StatusTooManyRequests, nil, true, []httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(1)}, 1},
		{"429, not learning, WithMaxAttempts(3)", http.StatusTooManyRequests, nil, false, []httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(3)}, 3},
		{"503, not learning, WithMaxAttempts(3)", http.StatusServiceUnavailable, nil, false, []httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(3)}, 1},
		{"429, x-should-retry false", http.StatusTooManyRequests, http.Header{"X-Should-Retry": {"false"}}, true, nil, 1},
		{"503, x-should-retry false", http.StatusServiceUnavailable, http.Header{"X-Should-Retry": {"false"}}, true, nil, 1},
		{"429, x-should-retry FALSE, WithMaxAttempts(5)", http.StatusTooManyRequests, http.Header{"X-Should-Retry": {" FALSE "}}, true,
			[]httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(5)}, 1},
		{"429, x-should-retry true", http.StatusTooManyRequests, http.Header{"X-Should-Retry": {"true"}}, true, nil, httpthrottle.DefaultMaxAttempts},
		{"429, x-should-retry false, not learning", http.StatusTooManyRequests, http.Header{"X-Should-Retry": {"false"}}, false,
			[]httpthrottle.TransportOption{httpthrottle.WithMaxAttempts(3)}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					calls.Add(1)
					return respond(req, c.status, c.header.Clone()), nil
				})
				opts := append([]httpthrottle.TransportOption{httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil)}, c.opts...)
				var tr *httpthrottle.Transport
				var err error
				if c.learn {
					tr, err = httpthrottle.NewLearningTransport(opts...)
				} else {
					tr, err = httpthrottle.NewTransport(newBucket(t, 10, 1e9, nil), opts...)
				}
				require.NoError(t, err)
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				_ = resp.Body.Close()
				assert.Equal(t, c.status, resp.StatusCode)
				assert.Equal(t, c.attempts, calls.Load(), "attempts")
			})
		})
	}
}

// TestLearnProblemBodyBounded: of a problem+json body that never ends, a
// learning Transport reads no more than its first 4 KiB to find the type
// (the refusal is counted, RoundTrip returns), and the caller reads on
// from the start.
func TestLearnProblemBodyBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int64
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp := respond(req, http.StatusForbidden, http.Header{"Content-Type": {"application/problem+json"}})
			resp.Body = io.NopCloser(&endlessProblem{served: &served})
			return resp, nil
		})
		tr, err := httpthrottle.NewLearningTransport(httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil),
			httpthrottle.WithLearnLimits(httpthrottle.LearnMaxAttempts(1)))
		require.NoError(t, err)
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.LessOrEqual(t, served.Load(), int64(4<<10), "bytes of the body read before the caller reads")
		assert.Equal(t, uint64(1), tr.LearnStats().Refusals, "the type before the cut is read")
		start := make([]byte, 12<<10)
		_, err = io.ReadFull(resp.Body, start)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(start), `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","detail":"ddd`))
		require.NoError(t, resp.Body.Close())
	})
}

// endlessProblem is a quota-exceeded problem whose detail never ends.
type endlessProblem struct {
	served *atomic.Int64
}

func (e *endlessProblem) Read(p []byte) (int, error) {
	const head = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","detail":"`
	for i := range p {
		if at := e.served.Load() + int64(i); at < int64(len(head)) {
			p[i] = head[at]
		} else {
			p[i] = 'd'
		}
	}
	e.served.Add(int64(len(p)))
	return len(p), nil
}
