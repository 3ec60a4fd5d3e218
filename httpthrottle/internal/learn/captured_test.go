package learn

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quotaWant is what a quota of a captured response should read as.
type quotaWant struct {
	name, unit       string
	limit, remaining int64
	window, reset    time.Duration // reset: from the response's Date
	bucket           string
}

// TestCapturedResponses reads each dialect from a response in the form
// the server sends it (testdata/captured; the sources below say where the
// form is documented), as of the response's own Date.
func TestCapturedResponses(t *testing.T) {
	cases := []struct {
		file, source string
		quotas       []quotaWant
		pauses       []time.Duration // the spent quotas' pauses, from Date
		refused      bool
		retryAfter   time.Duration // -1: none
		shouldRetry  bool
	}{
		{"github.http", "docs.github.com, REST API rate limits", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 60, remaining: 59, reset: time.Hour}}, nil, false, -1, true},
		{"discord.http", "discord.com/developers/docs/topics/rate-limits", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 5, remaining: 0, reset: 1250 * time.Millisecond, bucket: "abcd1234"}},
			[]time.Duration{1250 * time.Millisecond}, true, 2 * time.Second, true},
		{"x.http", "developer.x.com, rate limits: x-rate-limit-*", []quotaWant{{name: "x-rate-limit", unit: unitRequests, limit: 900, remaining: 899, reset: 15 * time.Minute}}, nil, false, -1, true},
		{"tollbooth.http", "a Caddy response printed by a user of didip/tollbooth", []quotaWant{{name: "x-rate-limit", unit: unitRequests, limit: 10, remaining: -1, window: time.Second}}, nil, true, -1, true},
		{"kong.http", "docs.konghq.com, rate-limiting plugin: headers sent to the client", []quotaWant{
			{name: "ratelimit", unit: unitRequests, limit: 5, remaining: 4, reset: time.Second},
			{name: "kong-second", unit: unitRequests, limit: 5, remaining: 4, window: time.Second},
			{name: "kong-minute", unit: unitRequests, limit: 10, remaining: 9, window: time.Minute}}, nil, false, -1, true},
		{"anthropic.http", "docs.anthropic.com, rate limits: response headers", []quotaWant{
			{name: "anthropic-requests", unit: unitRequests, limit: 50, remaining: 0, reset: 12 * time.Second},
			{name: "anthropic-tokens", unit: unitTokens, limit: 40000, remaining: 38000, reset: 3 * time.Second},
			{name: "anthropic-input-tokens", unit: "input tokens", limit: 30000, remaining: 29000, reset: 2 * time.Second},
			{name: "anthropic-output-tokens", unit: "output tokens", limit: 10000, remaining: 9000, reset: 1500 * time.Millisecond}},
			[]time.Duration{12 * time.Second}, true, 12 * time.Second, true},
		{"openai.http", "platform.openai.com, rate limits: headers", []quotaWant{
			{name: "requests", unit: unitRequests, limit: 60, remaining: 59, reset: time.Second},
			{name: "tokens", unit: unitTokens, limit: 150000, remaining: 149984, reset: 6 * time.Minute}}, nil, false, -1, true},
		{"openai-429.http", "openai-python's retry: retry-after-ms, x-should-retry", []quotaWant{
			{name: "requests", unit: unitRequests, limit: 60, remaining: 0, reset: 850 * time.Millisecond}},
			[]time.Duration{850 * time.Millisecond}, true, 1500 * time.Millisecond, false},
		{"reddit.http", "reddit's API rules: X-Ratelimit-Used, -Remaining, -Reset", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 600, remaining: 599, reset: 412 * time.Second}}, nil, false, -1, true},
		{"ietf.http", "draft-ietf-httpapi-ratelimit-headers-10", []quotaWant{
			{name: "burst", unit: unitRequests, limit: 100, remaining: 50, window: time.Minute, reset: 30 * time.Second},
			{name: "day", unit: unitRequests, limit: 1000, remaining: 999, window: 24 * time.Hour, reset: 10 * time.Hour}}, nil, false, -1, true},
		{"nginx-503.http", "nginx limit_req, limit_req_status 503 (the default)", nil, nil, true, -1, true},
		{"problem-quota.http", "draft-ietf-httpapi-ratelimit-headers-10, Problem Types: quota-exceeded", []quotaWant{{name: "daily", unit: unitRequests, limit: 100, remaining: 0, window: 24 * time.Hour, reset: time.Hour}},
			[]time.Duration{time.Hour}, true, -1, true},
		{"problem-capacity.http", "draft-ietf-httpapi-ratelimit-headers-10, Problem Types: temporary-reduced-capacity", nil, nil, true, 30 * time.Second, true},
		{"ulule.http", "ulule/limiter's stdlib middleware: the reset in Unix seconds, truncated", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 0}}, nil, true, -1, true},
		{"httprate.http", "go-chi/httprate: the reset in Unix seconds, Retry-After a window", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 0, reset: time.Minute}},
			[]time.Duration{time.Minute}, true, time.Minute, true},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			resp, now := readCaptured(t, c.file)
			rd := Read(resp.Header, now)
			assert.Empty(t, rd.Problems, "from %s", c.source)
			var got []quotaWant
			for _, a := range rd.quotas {
				q := quotaWant{name: a.name, unit: a.unit, limit: a.limit, remaining: a.remaining, window: a.window, bucket: a.bucket}
				if !a.reset.IsZero() {
					q.reset = a.reset.Sub(now)
				}
				got = append(got, q)
			}
			assert.Equal(t, c.quotas, got, "quotas, from %s", c.source)
			var pauses []time.Duration
			for _, p := range rd.Pauses {
				pauses = append(pauses, p.Until.Sub(now))
			}
			assert.Equal(t, c.pauses, pauses, "pauses")
			problem := ""
			if IsProblem(resp) {
				body, err := io.ReadAll(io.LimitReader(resp.Body, MaxProblemBody))
				require.NoError(t, err)
				problem = ProblemType(body)
			}
			assert.Equal(t, c.refused, Refused(resp.StatusCode, problem), "refused")
			ra := time.Duration(-1)
			if p, ok, prob := RetryAfter(resp.Header, now); ok {
				require.Nil(t, prob)
				ra = p.Until.Sub(now)
			}
			assert.Equal(t, c.retryAfter, ra, "Retry-After")
			assert.Equal(t, c.shouldRetry, ShouldRetry(resp.Header), "x-should-retry")
		})
	}
}

// readCaptured reads testdata/captured/name and returns the response and
// its Date.
func readCaptured(t *testing.T, name string) (*http.Response, time.Time) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "captured", name))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	resp, err := http.ReadResponse(bufio.NewReader(f), nil)
	require.NoError(t, err)
	now, err := http.ParseTime(resp.Header.Get("Date"))
	require.NoError(t, err)
	return resp, now
}
