package learn

import (
	"bufio"
	"bytes"
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

// TestCapturedResponses reads each dialect from a response as a real
// server sent it (testdata/captured: recorded from the real limiters on
// loopback by httpthrottle/interop's TestCaptureRealLimiters or, for
// express-rate-limit, by hand; copied from a public repository's recorded
// cassette or a proxy's recording; or pasted from a real answer into a
// public issue or workshop; each file's comment lines say where from), and
// the dialects no capture was found of from a response written from the
// documentation (testdata/documented; testdata/README.md lists them). Each
// is read as of the response's own Date, or of the instant asOf names for
// a paste without one.
func TestCapturedResponses(t *testing.T) {
	const never = -1
	cases := []struct {
		file, source string
		quotas       []quotaWant
		pauses       []time.Duration // the spent quotas' pauses, from Date
		refused      bool
		retryAfter   time.Duration // never: none
		shouldRetry  bool
	}{
		// Captured from the hosted APIs (cassettes).
		{"captured/github.http", "api.github.com, octokit.rb's cassette: Unix seconds", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 5000, remaining: 4990, reset: 59*time.Minute + 56*time.Second}}, nil, false, never, true},
		{"captured/x.http", "api.twitter.com, tweepy's cassette: x-rate-limit-*, Unix seconds", []quotaWant{{name: "x-rate-limit", unit: unitRequests, limit: 300, remaining: 299, reset: 15 * time.Minute}}, nil, false, never, true},
		{"captured/anthropic.http", "api.anthropic.com, llm-anthropic's cassette: RFC 3339 resets, a full bucket's a second in the past", []quotaWant{
			{name: "anthropic-requests", unit: unitRequests, limit: 4000, remaining: 3999, reset: -time.Second},
			{name: "anthropic-tokens", unit: unitTokens, limit: 480000, remaining: 477000, reset: -time.Second},
			{name: "anthropic-input-tokens", unit: "input tokens", limit: 400000, remaining: 400000, reset: -time.Second},
			{name: "anthropic-output-tokens", unit: "output tokens", limit: 80000, remaining: 77000, reset: time.Second}}, nil, false, never, true},
		// retry-after on an accepted answer: read, but the Transport
		// obeys it on a refusal only (TestTransportVirtualPushbackHoldsEveryone).
		{"captured/anthropic-retry-after.http", "api.anthropic.com, llm-anthropic's cassette: token buckets only, retry-after on a 200", []quotaWant{
			{name: "anthropic-tokens", unit: unitTokens, limit: 2400000, remaining: 2400000, reset: -2 * time.Second},
			{name: "anthropic-input-tokens", unit: "input tokens", limit: 2000000, remaining: 2000000, reset: -2 * time.Second},
			{name: "anthropic-output-tokens", unit: "output tokens", limit: 400000, remaining: 400000, reset: -2 * time.Second}}, nil, false, 33 * time.Second, true},
		{"captured/openai.http", "api.openai.com, llm's cassette: Go durations, 2ms and 0s", []quotaWant{
			{name: "requests", unit: unitRequests, limit: 30000, remaining: 29999, reset: 2 * time.Millisecond},
			{name: "tokens", unit: unitTokens, limit: 150000000, remaining: 149999993}}, nil, false, never, true},
		{"captured/reddit.http", "oauth.reddit.com, PRAW's cassette: used + remaining (988.0), reset in seconds from now", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 1000, remaining: 988, reset: 375 * time.Second}}, nil, false, never, true},
		// Captured from the real limiters on loopback.
		{"captured/httprate-accepted.http", "go-chi/httprate", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 9, reset: time.Second}}, nil, false, never, true},
		{"captured/httprate-refused.http", "go-chi/httprate: Retry-After and the reset, Unix seconds", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 0, reset: time.Second}},
			[]time.Duration{time.Second}, true, time.Second, true},
		{"captured/ulule-accepted.http", "ulule/limiter's stdlib middleware", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 9, reset: time.Second}}, nil, false, never, true},
		{"captured/ulule-refused.http", "ulule/limiter's stdlib middleware: no Retry-After", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 0, reset: time.Second}},
			[]time.Duration{time.Second}, true, never, true},
		{"captured/tollbooth-accepted.http", "didip/tollbooth v7: RateLimit-* in seconds from now beside X-Rate-Limit-Limit 10.00 per -Duration 1", []quotaWant{
			{name: "ratelimit", unit: unitRequests, limit: 10, remaining: 9, reset: time.Second},
			{name: "x-rate-limit", unit: unitRequests, limit: 10, remaining: -1, window: time.Second}}, nil, false, never, true},
		{"captured/tollbooth-refused.http", "didip/tollbooth v7", []quotaWant{
			{name: "ratelimit", unit: unitRequests, limit: 10, remaining: 0, reset: time.Second},
			{name: "x-rate-limit", unit: unitRequests, limit: 10, remaining: -1, window: time.Second}}, []time.Duration{time.Second}, true, never, true},
		{"captured/golimiter-accepted.http", "sethvargo/go-limiter: X-RateLimit-Reset an HTTP-date in UTC", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 9, reset: time.Second}}, nil, false, never, true},
		{"captured/golimiter-refused.http", "sethvargo/go-limiter: Retry-After the same HTTP-date in UTC", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 0, reset: time.Second}},
			[]time.Duration{time.Second}, true, time.Second, true},
		{"captured/httprate-503.http", "go-chi/httprate refusing with 503 (WithLimitHandler): Retry-After and the reset, Unix seconds", []quotaWant{{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 0, reset: time.Second}},
			[]time.Duration{time.Second}, true, time.Second, true},
		{"captured/nginx-503.http", "nginx limit_req, limit_req_status 503 (the default): no headers", nil, nil, true, never, true},
		// Pasted from real answers into public repositories and issues.
		{"captured/kong-accepted.http", "Kong 3.1 rate-limiting, curl -I in Kong/aws-workshops: RateLimit-* (seconds from now) beside X-RateLimit-*-Minute", []quotaWant{
			{name: "ratelimit", unit: unitRequests, limit: 5, remaining: 4, reset: 10 * time.Second},
			{name: "kong-minute", unit: unitRequests, limit: 5, remaining: 4, window: time.Minute}}, nil, false, never, true},
		{"captured/kong-refused.http", "Kong 3.1 rate-limiting, curl -I in Kong/aws-workshops: the reset at the clock's minute", []quotaWant{
			{name: "ratelimit", unit: unitRequests, limit: 5, remaining: 0, reset: 34 * time.Second},
			{name: "kong-minute", unit: unitRequests, limit: 5, remaining: 0, window: time.Minute}}, []time.Duration{34 * time.Second}, true, 34 * time.Second, true},
		{"captured/kong-3.11-refused.http", "Kong 3.11 rate-limiting (redis), curl -I in Kong/workshop-kong-api-ai-gateway", []quotaWant{
			{name: "ratelimit", unit: unitRequests, limit: 5, remaining: 0, reset: 56 * time.Second},
			{name: "kong-minute", unit: unitRequests, limit: 5, remaining: 0, window: time.Minute}}, []time.Duration{56 * time.Second}, true, 56 * time.Second, true},
		{"captured/discord-accepted.http", "discord.com, curl -v in discord/discord-api-docs#5646: fractional Unix reset, -Reset-After, -Bucket", []quotaWant{
			{name: "x-ratelimit", unit: unitRequests, limit: 50000, remaining: 48773, reset: 102737719 * time.Millisecond, bucket: "d1240eeffb4c549bd62b579ece0ffd01"}},
			nil, false, never, true},
		{"captured/discord-refused.http", "discord.com, curl -v in discord/discord-api-docs#5646: a spent bucket", []quotaWant{
			{name: "x-ratelimit", unit: unitRequests, limit: 5, remaining: 0, reset: 5588 * time.Millisecond, bucket: "1d3c67957bcdccc6709861c232df8529"}},
			[]time.Duration{5588 * time.Millisecond}, true, never, true},
		{"captured/discord-shared.http", "discord.com, curl -v in discord/discord-api-docs#6109: X-RateLimit-Scope: shared, 4 of 5 left", []quotaWant{
			{name: "x-ratelimit", unit: unitRequests, limit: 5, remaining: 4, reset: 999 * time.Millisecond, bucket: "1d3c67957bcdccc6709861c232df8529"}},
			nil, true, time.Second, true},
		{"captured/huggingface-accepted.http", `huggingface.co, in huggingface/huggingface_hub#3553: RateLimit-Policy "fixed window";"api" (no valid Structured Field)`, []quotaWant{
			{name: "api", unit: unitRequests, limit: 500, remaining: 489, window: 5 * time.Minute, reset: 189 * time.Second}}, nil, false, never, true},
		{"captured/huggingface-refused.http", "huggingface.co, in huggingface/huggingface_hub#3553: a spent quota", []quotaWant{
			{name: "api", unit: unitRequests, limit: 500, remaining: 0, window: 5 * time.Minute, reset: 55 * time.Second}},
			[]time.Duration{55 * time.Second}, true, never, true},
		{"captured/anthropic-429.http", "api.anthropic.com, a proxy's recording: Retry-After 453413 s, x-should-retry: true", nil, nil, true, 453413 * time.Second, true},
		{"captured/anthropic-401.http", "api.anthropic.com, a proxy's recording: x-should-retry: false on a 401", nil, nil, false, never, false},
		{"captured/openai-429.http", "api.openai.com, in openai/openai-node#1477: a 429 with no pushback header at all", nil, nil, true, never, true},
		// retry-after-ms is read before Retry-After: 45.175 s, not 46.
		{"captured/openai-429-retry-after-ms.http", "api.openai.com, zhlzxa/codex-from-scratch's probe: retry-after 46 and retry-after-ms 45175, tokens left but no limit", nil, nil, true, 45175 * time.Millisecond, true},
		{"captured/anthropic-429-requests.http", "api.anthropic.com, in anthropics/anthropic-sdk-typescript#357: the requests bucket spent, no Retry-After", []quotaWant{
			{name: "anthropic-requests", unit: unitRequests, limit: 5, remaining: 0, reset: time.Second},
			{name: "anthropic-tokens", unit: unitTokens, limit: 25000, remaining: 16000, reset: time.Second}},
			[]time.Duration{time.Second}, true, never, true},
		{"captured/discord-global.http", "discord.com, in switchupcb/disgo#14: X-Ratelimit-Global: true, scope global, no bucket; Retry-After 1 where the body says 0.661", nil, nil, true, time.Second, true},
		// Captured from express-rate-limit on loopback, each IETF draft mode.
		{"captured/express-draft6-accepted.http", "express-rate-limit draft-6: RateLimit-Policy 5;w=60 beside RateLimit-Limit/-Remaining/-Reset", []quotaWant{
			{name: "5", unit: unitRequests, limit: 5, remaining: -1, window: time.Minute},
			{name: "ratelimit", unit: unitRequests, limit: 5, remaining: 4, reset: time.Minute}}, nil, false, never, true},
		{"captured/express-draft6-refused.http", "express-rate-limit draft-6", []quotaWant{
			{name: "5", unit: unitRequests, limit: 5, remaining: -1, window: time.Minute},
			{name: "ratelimit", unit: unitRequests, limit: 5, remaining: 0, reset: time.Minute}}, []time.Duration{time.Minute}, true, time.Minute, true},
		{"captured/express-draft7-accepted.http", "express-rate-limit draft-7: the RateLimit Dictionary joined to the one policy", []quotaWant{
			{name: "5", unit: unitRequests, limit: 5, remaining: 4, window: time.Minute, reset: time.Minute}}, nil, false, never, true},
		{"captured/express-draft7-refused.http", "express-rate-limit draft-7", []quotaWant{
			{name: "5", unit: unitRequests, limit: 5, remaining: 0, window: time.Minute, reset: time.Minute}}, []time.Duration{time.Minute}, true, time.Minute, true},
		{"captured/express-draft8-accepted.http", "express-rate-limit draft-8: pk in RateLimit-Policy only", []quotaWant{
			{name: "5-in-1min", unit: unitRequests, limit: 5, remaining: 4, window: time.Minute, reset: time.Minute, bucket: "MTJjYTE3YjQ5YWYy"}}, nil, false, never, true},
		{"captured/express-draft8-refused.http", "express-rate-limit draft-8", []quotaWant{
			{name: "5-in-1min", unit: unitRequests, limit: 5, remaining: 0, window: time.Minute, reset: time.Minute, bucket: "MTJjYTE3YjQ5YWYy"}},
			[]time.Duration{time.Minute}, true, time.Minute, true},
		{"captured/express-draft8-two-accepted.http", "express-rate-limit draft-8, two limiters: two policies at once", []quotaWant{
			{name: "20-in-1hr", unit: unitRequests, limit: 20, remaining: 19, window: time.Hour, reset: time.Hour, bucket: "MTJjYTE3YjQ5YWYy"},
			{name: "5-in-1min", unit: unitRequests, limit: 5, remaining: 4, window: time.Minute, reset: time.Minute, bucket: "MTJjYTE3YjQ5YWYy"}}, nil, false, never, true},
		{"captured/express-draft8-two-refused.http", "express-rate-limit draft-8, two limiters: the minute's spent, the hour's not", []quotaWant{
			{name: "20-in-1hr", unit: unitRequests, limit: 20, remaining: 14, window: time.Hour, reset: time.Hour, bucket: "MTJjYTE3YjQ5YWYy"},
			{name: "5-in-1min", unit: unitRequests, limit: 5, remaining: 0, window: time.Minute, reset: time.Minute, bucket: "MTJjYTE3YjQ5YWYy"}},
			[]time.Duration{time.Minute}, true, time.Minute, true},
		// Written from the documentation: no capture found.
		{"documented/retry-after-ms.http", "openai-python's retry: retry-after-ms, x-should-retry", []quotaWant{
			{name: "requests", unit: unitRequests, limit: 60, remaining: 0, reset: 850 * time.Millisecond}},
			[]time.Duration{850 * time.Millisecond}, true, 1500 * time.Millisecond, false},
		{"documented/ietf.http", "draft-ietf-httpapi-ratelimit-headers-10", []quotaWant{
			{name: "burst", unit: unitRequests, limit: 100, remaining: 50, window: time.Minute, reset: 30 * time.Second},
			{name: "day", unit: unitRequests, limit: 1000, remaining: 999, window: 24 * time.Hour, reset: 10 * time.Hour}}, nil, false, never, true},
		{"documented/problem-quota.http", "draft-ietf-httpapi-ratelimit-headers-10, Problem Types: quota-exceeded", []quotaWant{{name: "daily", unit: unitRequests, limit: 100, remaining: 0, window: 24 * time.Hour, reset: time.Hour}},
			[]time.Duration{time.Hour}, true, never, true},
		{"documented/problem-capacity.http", "draft-ietf-httpapi-ratelimit-headers-10, Problem Types: temporary-reduced-capacity", nil, nil, true, 30 * time.Second, true},
		// Discord's scopes (classify: TestClassifyCaptured).
		{"documented/discord-shared.http", "Discord's docs, Rate_Limits.md: X-RateLimit-Scope: shared, the bucket's fields unchanged", []quotaWant{
			{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: 9, reset: 64570 * time.Millisecond, bucket: "abcd1234"}},
			nil, true, 1337 * time.Second, true},
		{"documented/discord-global.http", "Discord's docs, Rate_Limits.md: X-RateLimit-Global: true, no bucket", nil, nil, true, 65 * time.Second, true},
	}
	// The pastes without a Date: Discord's as of X-RateLimit-Reset less
	// -Reset-After, Hugging Face's (all relative) as of any instant.
	asOf := map[string]time.Time{
		"captured/discord-accepted.http":          time.UnixMilli(1668617849925),
		"captured/discord-refused.http":           time.UnixMilli(1668618050167),
		"captured/discord-shared.http":            time.UnixMilli(1682258040904 - 999),
		"documented/discord-shared.http":          time.UnixMilli(1470173023123 - 64570),
		"documented/discord-global.http":          time.UnixMilli(1470173023123 - 64570),
		"captured/discord-global.http":            time.Date(2022, 7, 8, 23, 34, 34, 0, time.UTC),
		"captured/huggingface-accepted.http":      time.Date(2025, 11, 18, 12, 0, 0, 0, time.UTC),
		"captured/huggingface-refused.http":       time.Date(2025, 11, 18, 12, 0, 0, 0, time.UTC),
		"captured/openai-429-retry-after-ms.http": time.Date(2026, 8, 12, 12, 0, 0, 0, time.UTC),
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.file] = true
		t.Run(c.file, func(t *testing.T) {
			resp, now := readCaptured(t, c.file)
			if at, ok := asOf[c.file]; ok {
				require.True(t, now.IsZero(), "%s has a Date", c.file)
				now = at
			}
			require.False(t, now.IsZero(), "%s has no Date", c.file)
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
			ra := time.Duration(never)
			require.Nil(t, rd.RetryAfterProblem)
			if rd.RetryAfter != nil {
				ra = rd.RetryAfter.Until.Sub(now)
			}
			assert.Equal(t, c.retryAfter, ra, "Retry-After")
			assert.Equal(t, c.shouldRetry, ShouldRetry(resp.Header), "x-should-retry")
		})
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.http"))
	require.NoError(t, err)
	for _, f := range files {
		rel, _ := filepath.Rel("testdata", f)
		assert.True(t, seen[filepath.ToSlash(rel)], "%s has no case", rel)
	}
}

// readCaptured reads testdata/name, less its leading comment lines (where
// it came from), and returns the response and its Date (X's is in "UTC",
// which http.ParseTime does not take), zero if it has none.
func readCaptured(t *testing.T, name string) (*http.Response, time.Time) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	for bytes.HasPrefix(b, []byte("#")) {
		_, b, _ = bytes.Cut(b, []byte("\n"))
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	require.NoError(t, err)
	if resp.Header.Get("Date") == "" {
		return resp, time.Time{}
	}
	now, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		now, err = time.Parse(time.RFC1123, resp.Header.Get("Date"))
	}
	require.NoError(t, err)
	return resp, now
}
