package learn

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadPauses(t *testing.T) {
	unix := func(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).Unix(), 10) }
	steps := []struct {
		name    string
		header  http.Header
		waits   []time.Duration // until - testNow of each hint, in order
		headers []string        // the header each hint names
		errs    []string        // "Header: reason substring" of each HeaderError, in order
	}{
		{name: "no headers", header: http.Header{}},

		// X-RateLimit-*
		{name: "x: quota left", header: http.Header{"X-Ratelimit-Remaining": {"3"}, "X-Ratelimit-Reset": {"45"}}},
		{name: "x: spent, reset in seconds", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"45"}},
			waits: []time.Duration{45 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, reset as Unix time", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(90 * time.Second)}},
			waits: []time.Duration{90 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, fractional Unix time", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(90*time.Second) + ".25"}},
			waits: []time.Duration{90*time.Second + 250*time.Millisecond}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, reset already past", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(-time.Minute)}}},
		{name: "x: fractional remaining below one", header: http.Header{"X-Ratelimit-Remaining": {"0.5"}, "X-Ratelimit-Reset": {"10"}},
			waits: []time.Duration{10 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, no reset", header: http.Header{"X-Ratelimit-Remaining": {"0"}},
			errs: []string{"X-RateLimit-Remaining: quota spent but X-RateLimit-Reset is missing"}},
		{name: "x: negative remaining", header: http.Header{"X-Ratelimit-Remaining": {"-1"}, "X-Ratelimit-Reset": {"10"}},
			errs: []string{"X-RateLimit-Remaining: negative count"}},
		{name: "x: garbled remaining", header: http.Header{"X-Ratelimit-Remaining": {"lots"}},
			errs: []string{"X-RateLimit-Remaining: not a number of requests"}},
		{name: "x: garbled reset", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"tomorrow"}},
			errs: []string{"X-RateLimit-Reset: neither a number of seconds nor an HTTP-date"}},
		{name: "x: spent, reset an HTTP-date in UTC (sethvargo/go-limiter)", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"Fri, 02 Jan 2026 15:05:35 UTC"}},
			waits: []time.Duration{90 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, reset an HTTP-date", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"Fri, 02 Jan 2026 15:05:35 GMT"}},
			waits: []time.Duration{90 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: reset an HTTP-date years away", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"Fri, 02 Jan 2037 15:05:35 GMT"}},
			errs: []string{"X-RateLimit-Reset: not a plausible reset"}},
		{name: "x: spent, reset in Unix milliseconds", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(testNow.Add(90*time.Second).UnixMilli(), 10)}},
			waits: []time.Duration{90 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, reset in Unix microseconds", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(testNow.Add(90*time.Second).UnixMicro(), 10)}},
			waits: []time.Duration{90 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, reset in Unix nanoseconds", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(testNow.Add(90*time.Second).UnixNano(), 10)}},
			waits: []time.Duration{90 * time.Second}, headers: []string{"X-RateLimit-Reset"}},
		{name: "x: spent, reset overflowing", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"99999999999999999999"}},
			errs: []string{"X-RateLimit-Reset: not a plausible reset"}},
		{name: "x: spent, reset 31 years from now", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"999999999"}},
			errs: []string{"X-RateLimit-Reset: not a plausible reset"}},
		{name: "x: spent, Unix reset 2 years ahead", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(2 * 365 * 24 * time.Hour)}},
			errs: []string{"X-RateLimit-Reset: not a plausible reset"}},
		{name: "sf: t overflowing", header: http.Header{"Ratelimit": {`"default";r=0;t=999999999999999`}},
			errs: []string{`RateLimit: policy "default": t=999999999999999: not a plausible reset`}},
		{name: "x: negative reset", header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"-3"}},
			errs: []string{"X-RateLimit-Reset: negative"}},

		// IETF drafts up to -06
		{name: "draft-06: spent", header: http.Header{"Ratelimit-Limit": {"10"}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"12"}},
			waits: []time.Duration{12 * time.Second}, headers: []string{"RateLimit-Reset"}},
		{name: "draft-06: left", header: http.Header{"Ratelimit-Remaining": {"4"}, "Ratelimit-Reset": {"12"}}},
		{name: "draft-06: spent, no reset, policy windows", header: http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Policy": {"10;w=1, 50;w=60"}},
			waits: []time.Duration{time.Minute}, headers: []string{"RateLimit-Policy"}},
		{name: "draft-06: spent, no reset, no policy", header: http.Header{"Ratelimit-Remaining": {"0"}},
			errs: []string{"RateLimit-Remaining: quota spent but RateLimit-Reset is missing"}},

		// Structured RateLimit, later drafts
		{name: "sf: spent with t", header: http.Header{"Ratelimit": {`"default";r=0;t=30`}},
			waits: []time.Duration{30 * time.Second}, headers: []string{"RateLimit"}},
		{name: "sf: left", header: http.Header{"Ratelimit": {`"default";r=50;t=30`}}},
		{name: "sf: token name", header: http.Header{"Ratelimit": {`default;r=0;t=5`}},
			waits: []time.Duration{5 * time.Second}, headers: []string{"RateLimit"}},
		{name: "sf: spent without t, window from policy", header: http.Header{
			"Ratelimit": {`"default";r=0`}, "Ratelimit-Policy": {`"burst";q=10;w=1, "default";q=100;w=60`}},
			waits: []time.Duration{time.Minute}, headers: []string{"RateLimit"}},
		{name: "sf: two policies, one spent", header: http.Header{"Ratelimit": {`"burst";r=5;t=1, "day";r=0;t=300`}},
			waits: []time.Duration{300 * time.Second}, headers: []string{"RateLimit"}},
		{name: "sf: two header lines, both spent", header: http.Header{"Ratelimit": {`"burst";r=0;t=1`, `"day";r=0;t=300`}},
			waits: []time.Duration{time.Second, 300 * time.Second}, headers: []string{"RateLimit", "RateLimit"}},
		{name: "sf: spent without t or policy", header: http.Header{"Ratelimit": {`"default";r=0`}},
			errs: []string{`RateLimit: policy "default" is spent but has no t parameter`}},
		{name: "sf: no r", header: http.Header{"Ratelimit": {`"default";t=3`}},
			errs: []string{`RateLimit: policy "default" has no r`}},
		{name: "sf: negative t", header: http.Header{"Ratelimit": {`"default";r=0;t=-1`}},
			errs: []string{`RateLimit: policy "default": t=-1: negative delay`}},
		{name: "sf: negative r", header: http.Header{"Ratelimit": {`"default";r=-2;t=1`}},
			errs: []string{`RateLimit: policy "default": r=-2: negative count`}},
		{name: "sf: unterminated string", header: http.Header{"Ratelimit": {`"default;r=0;t=1`}},
			errs: []string{"RateLimit: not a structured field: invalid string format"}},
		{name: "sf: bad policy", header: http.Header{"Ratelimit-Policy": {`"default";q=10;w=soon`}},
			errs: []string{`RateLimit-Policy: policy "default": w=soon`}},

		// draft -07 Dictionary form
		{name: "dict: spent", header: http.Header{"Ratelimit": {"limit=10, remaining=0, reset=20"}},
			waits: []time.Duration{20 * time.Second}, headers: []string{"RateLimit"}},
		{name: "dict: left", header: http.Header{"Ratelimit": {"limit=10, remaining=9, reset=20"}}},
		{name: "dict: spent, no reset", header: http.Header{"Ratelimit": {"limit=10, remaining=0"}},
			errs: []string{"RateLimit: quota spent but no reset member"}},

		// Dialects together: each spent quota gives its hint.
		{name: "x and sf", header: http.Header{
			"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"10"}, "Ratelimit": {`"default";r=0;t=20`}},
			waits: []time.Duration{10 * time.Second, 20 * time.Second}, headers: []string{"X-RateLimit-Reset", "RateLimit"}},
	}
	for i, s := range steps {
		rd := Read(s.header, testNow)
		hints, errs := rd.Pauses, rd.Problems
		var waits []time.Duration
		var headers []string
		for _, h := range hints {
			waits = append(waits, h.Until.Sub(testNow))
			headers = append(headers, h.Header)
		}
		assert.Equal(t, s.waits, waits, "step %d (%s): waits", i, s.name)
		assert.Equal(t, s.headers, headers, "step %d (%s): headers", i, s.name)
		if !assert.Len(t, errs, len(s.errs), "step %d (%s): errors %v", i, s.name, errs) {
			continue
		}
		for j, herr := range errs {
			assert.Contains(t, herr.Header+": "+herr.Reason, s.errs[j], "step %d (%s): error %d", i, s.name, j)
		}
	}
}

func TestParseMembers(t *testing.T) {
	ms, err := parseMembers(`"burst";r=5;t=1, day;r=0;t=300, "a,b;c=\"d\"";x="y;z";flag`)
	require.NoError(t, err)
	require.Len(t, ms, 3)
	assert.Equal(t, sfMember{item: "burst", params: map[string]string{"r": "5", "t": "1"}}, ms[0])
	assert.Equal(t, sfMember{item: "day", params: map[string]string{"r": "0", "t": "300"}}, ms[1])
	assert.Equal(t, sfMember{item: `a,b;c="d"`, params: map[string]string{"x": "y;z", "flag": "?1"}}, ms[2])

	ms, err = parseMembers("limit=10, remaining=0, reset=20")
	require.NoError(t, err)
	assert.Equal(t, []sfMember{{key: "limit", item: "10"}, {key: "remaining", item: "0"}, {key: "reset", item: "20"}}, ms)

	for _, bad := range []string{`"open`, `a,,b`, `a;R=1`, `a;=1`, ``} {
		_, err := parseMembers(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// TestParseLenientList: a member with a second string before its
// parameters (Hugging Face's RateLimit-Policy) is read with its last string
// as the item; every other flaw is still an error.
func TestParseLenientList(t *testing.T) {
	ms, err := parseLenientList(`"fixed window";"api";q=500;w=300, "b";q=1`)
	require.NoError(t, err)
	assert.Equal(t, []sfMember{{item: "api", params: map[string]string{"q": "500", "w": "300"}}, {item: "b", params: map[string]string{"q": "1"}}}, ms)
	for _, bad := range []string{`"open;q=1`, `"a";;q=1`, `"a";Q=1`, `"a",,"b"`, ``} {
		_, err := parseLenientList(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// TestRateLimitJoinsPolicy: a RateLimit member without a partition key
// joins the only policy of its name (express-rate-limit's draft-8 mode);
// with two of that name it joins none; a draft -07 Dictionary joins the
// only policy, or the only one whose quota is its limit, or, with no
// policy, stands alone with its own limit.
func TestRateLimitJoinsPolicy(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		want   []announcement
	}{
		{"no pk, one policy", http.Header{"Ratelimit-Policy": {`"p";q=5;w=60;pk=:YWI=:`}, "Ratelimit": {`"p";r=4;t=60`}},
			[]announcement{{name: "p", bucket: "YWI=", limit: 5, remaining: 4, window: time.Minute, reset: testNow.Add(time.Minute)}}},
		{"no pk, two policies", http.Header{"Ratelimit-Policy": {`"p";q=5;w=60;pk=:YWI=:, "p";q=9;w=60;pk=:Y2Q=:`}, "Ratelimit": {`"p";r=4;t=60`}},
			[]announcement{{name: "p", bucket: "YWI=", limit: 5, remaining: -1, window: time.Minute}, {name: "p", bucket: "Y2Q=", limit: 9, remaining: -1, window: time.Minute},
				{name: "p", limit: -1, remaining: 4, reset: testNow.Add(time.Minute)}}},
		{"dictionary, one policy", http.Header{"Ratelimit-Policy": {`5;w=60`}, "Ratelimit": {`limit=5, remaining=4, reset=60`}},
			[]announcement{{name: "5", limit: 5, remaining: 4, window: time.Minute, reset: testNow.Add(time.Minute)}}},
		{"dictionary, the policy of its limit", http.Header{"Ratelimit-Policy": {`10;w=1, 100;w=3600`}, "Ratelimit": {`limit=100, remaining=99, reset=3000`}},
			[]announcement{{name: "10", limit: 10, remaining: -1, window: time.Second}, {name: "100", limit: 100, remaining: 99, window: time.Hour, reset: testNow.Add(3000 * time.Second)}}},
		{"dictionary, two policies of its limit", http.Header{"Ratelimit-Policy": {`100;w=1, 100;w=3600`}, "Ratelimit": {`limit=100, remaining=99, reset=3000`}},
			[]announcement{{name: "100", limit: 100, remaining: -1, window: time.Second}, {name: "100", limit: 100, remaining: -1, window: time.Hour}}},
		{"dictionary alone", http.Header{"Ratelimit": {`limit=5, remaining=4, reset=60`}},
			[]announcement{{name: "default", limit: 5, remaining: 4, reset: testNow.Add(time.Minute)}}},
	}
	for _, c := range cases {
		rd := Read(c.header, testNow)
		assert.Empty(t, rd.Problems, c.name)
		var got []announcement
		for _, a := range rd.quotas {
			got = append(got, announcement{name: a.name, bucket: a.bucket, limit: a.limit, remaining: a.remaining, window: a.window, reset: a.reset})
		}
		assert.Equal(t, c.want, got, c.name)
	}
}
