package learn

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fuzzHeader builds a header set from lines "Name: value", so that the
// fuzzer mutates header names as well as values and sends a field on
// several lines.
func fuzzHeader(raw string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(raw, "\n") {
		if name, v, ok := strings.Cut(line, ":"); ok && name != "" {
			h.Add(name, strings.TrimPrefix(v, " "))
		}
	}
	return h
}

// fuzzNow maps any int64 to an instant between 1970 and 2170: a clock
// reading, never one near time.Time's own limits, which no Transport has.
func fuzzNow(ns int64) time.Time {
	const span = uint64(200 * 365 * 24 * time.Hour)
	return time.Unix(0, int64(uint64(ns)%span)).UTC()
}

// headerSeeds are the realistic and hostile header sets of the table
// tests (header_test.go, retryafter_test.go, and httpthrottle's
// learn_hostile_test.go and learn_quirks_test.go), one line each.
var headerSeeds = []string{
	"",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 45",
	"X-Ratelimit-Limit: 10\nX-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 1767366335",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 1767366335.25",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 1767366335000",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 1767366335000000000",
	"X-Ratelimit-Remaining: 0.5\nX-Ratelimit-Reset: 10",
	"X-Ratelimit-Remaining: -1\nX-Ratelimit-Reset: -3",
	"X-Ratelimit-Remaining: lots\nX-Ratelimit-Limit: -3",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: Fri, 02 Jan 2026 15:05:35 UTC",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: Fri, 02 Jan 2037 15:05:35 GMT",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 99999999999999999999",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 999999999",
	"X-Ratelimit-Limit: 10\nX-Ratelimit-Remaining: 0\nX-Ratelimit-Reset-After: 0.250\nX-Ratelimit-Bucket: abc",
	"X-Ratelimit-Remaining: 0\nX-Ratelimit-Reset-After: -2",
	"X-Ratelimit-Used: 3\nX-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 30",
	"X-Rate-Limit-Limit: 0.5\nX-Rate-Limit-Duration: 1\nX-Rate-Limit-Remaining: 0",
	"X-Ratelimit-Limit-Requests: 1000\nX-Ratelimit-Remaining-Requests: 0\nX-Ratelimit-Reset-Requests: 6m0s",
	"X-Ratelimit-Limit-Tokens: 90000\nX-Ratelimit-Remaining-Tokens: 0\nX-Ratelimit-Reset-Tokens: 850ms",
	"Anthropic-Ratelimit-Requests-Limit: 50\nAnthropic-Ratelimit-Requests-Remaining: 0\nAnthropic-Ratelimit-Requests-Reset: 2026-01-02T15:05:05Z",
	"X-Ratelimit-Limit-Minute: 5\nX-Ratelimit-Remaining-Minute: 0",
	"Ratelimit-Limit: 10, 10;w=1\nRatelimit-Remaining: 0\nRatelimit-Reset: 12",
	"Ratelimit-Remaining: 0\nRatelimit-Policy: 10;w=1, 50;w=60",
	"Ratelimit: \"default\";r=0;t=30",
	"Ratelimit: default;r=0;t=5",
	"Ratelimit: \"default\";r=0\nRatelimit-Policy: \"burst\";q=10;w=1, \"default\";q=100;w=60",
	"Ratelimit: \"burst\";r=0;t=1\nRatelimit: \"day\";r=0;t=300",
	"Ratelimit: \"default\";r=0;t=-1",
	"Ratelimit: \"default;r=0;t=1",
	"Ratelimit: \"d\";r=0;t=999999999999999",
	"Ratelimit: \x00\xff;;,,",
	"Ratelimit-Policy: \"d\";q=-5;w=-1",
	"Ratelimit-Policy: \"d\";q=999999999999999;w=999999999999999\nRatelimit: \"d\";r=0",
	"Ratelimit-Policy: \"d;q=",
	"Ratelimit-Policy: \"d\";q=5;w=0",
	"Ratelimit-Policy: \"p\";q=5;w=60;pk=:YWI=:\nRatelimit: \"p\";r=4;t=60",
	"Ratelimit-Policy: \"fixed window\";\"api\";q=500;w=300",
	"Ratelimit: limit=10, remaining=0, reset=20",
	"Ratelimit-Policy: 10;w=1, 100;w=3600\nRatelimit: limit=100, remaining=0, reset=3000",
	"Retry-After: 120",
	"Retry-After: 99999999999999999999999",
	"Retry-After: Fri, 02 Jan 2026 15:05:05 GMT\nRetry-After-Ms: 1500",
	"Retry-After-Ms: -1\nRetry-After: soon",
}

// FuzzRead: whatever the headers, Read does not panic, reads the same
// headers alike twice, leaves them as they were, and gives only sane
// results: pauses after now and, for a reset header, no farther than
// maxPlausibleReset; quotas whose counts are -1 (unknown) or within the
// clamp, whose windows are not negative, and whose resets are plausible.
func FuzzRead(f *testing.F) {
	for _, s := range headerSeeds {
		f.Add(s, testNow.UnixNano())
	}
	f.Add("Ratelimit: \"d\";r=0;t=1", int64(-1))
	f.Fuzz(func(t *testing.T, raw string, nowNs int64) {
		h, now := fuzzHeader(raw), fuzzNow(nowNs)
		before := h.Clone()
		rd := Read(h, now)
		if again := Read(h, now); !reflect.DeepEqual(rd, again) {
			t.Fatalf("Read is not deterministic:\n%+v\n%+v", rd, again)
		}
		if !reflect.DeepEqual(h, before) {
			t.Fatalf("Read changed its header: %v, was %v", h, before)
		}
		for _, p := range rd.Pauses {
			wait := p.Until.Sub(now)
			if wait <= 0 {
				t.Errorf("pause %+v is not after now %v", p, now)
			}
			// A policy's window (RateLimit-Policy, or RateLimit waiting
			// for it) may be as long as a Duration: the Transport caps it
			// (WithMaxPause). A reset header is bounded here.
			if p.Header != "RateLimit-Policy" && p.Header != "RateLimit" && wait > maxPlausibleReset+time.Second {
				t.Errorf("pause %+v is %v from now, beyond maxPlausibleReset", p, wait)
			}
		}
		for _, prob := range rd.Problems {
			if prob == nil || prob.Header == "" || prob.Reason == "" {
				t.Errorf("a problem without header or reason: %+v", prob)
			}
		}
		for _, a := range rd.quotas {
			checkAnnouncement(t, a, now)
		}
		checkRetryAfter(t, h, now, rd.RetryAfter, rd.RetryAfter != nil, rd.RetryAfterProblem)
	})
}

// checkAnnouncement fails t unless a is a quota a Learner can be fed.
func checkAnnouncement(t *testing.T, a announcement, now time.Time) {
	t.Helper()
	if a.limit < -1 || a.limit > 1<<40 {
		t.Errorf("quota %+v: limit out of range", a)
	}
	if a.remaining < -1 || a.remaining > 1<<40 {
		t.Errorf("quota %+v: remaining out of range", a)
	}
	if a.window < 0 || a.minWindow < 0 {
		t.Errorf("quota %+v: negative window", a)
	}
	if !a.reset.IsZero() && a.reset.Sub(now).Abs() > maxPlausibleReset+time.Second {
		t.Errorf("quota %+v: reset %v from now, beyond maxPlausibleReset", a, a.reset.Sub(now))
	}
	if a.header == "" || a.name == "" && a.header != "RateLimit" && a.header != "RateLimit-Policy" {
		t.Errorf("quota %+v: no header or name", a)
	}
}

// checkRetryAfter fails t unless RetryAfter's answer for h at now is sane:
// a pause only when ok; a delay (not a date) never before now, saturating
// at the largest Duration rather than wrapping; a problem named after
// the header it is about.
func checkRetryAfter(t *testing.T, h http.Header, now time.Time, p *Pause, ok bool, prob *Problem) {
	t.Helper()
	if prob != nil && prob.Header != "Retry-After" && prob.Header != retryAfterMillisHeader {
		t.Errorf("Retry-After problem names %q", prob.Header)
	}
	if !ok {
		if p != nil && !p.Until.IsZero() {
			t.Errorf("no Retry-After but a pause %+v", p)
		}
		return
	}
	switch p.Header {
	case retryAfterMillisHeader:
	case "Retry-After":
		if _, reason := parseSeconds(p.Value); reason != "" {
			return // an HTTP-date: any instant, the past meaning now
		}
	default:
		t.Fatalf("Retry-After pause names %q", p.Header)
	}
	if p.Until.Before(now) {
		t.Errorf("Retry-After %+v: a delay before now %v (wrapped?)", p, now)
	}
}

// FuzzRetryAfter: RetryAfter of any Retry-After and Retry-After-Ms
// values is deterministic and sane (checkRetryAfter); a number of
// seconds is read to the nanosecond, saturating past a Duration.
func FuzzRetryAfter(f *testing.F) {
	for _, v := range []string{"120", "0", "1.5", "  7 ", "Fri, 02 Jan 2026 15:05:05 GMT", "Friday, 02-Jan-26 15:05:05 GMT",
		"Fri Jan  2 15:05:05 2026", "Fri, 02 Jan 2026 15:05:05 UTC", "Fri, 02 Jan 2026 15:05:05 PST", "1743440400",
		"99999999999999999999999", "-5", "-0.5", "soon", "5s", "+5", "1e3", "0x10", "Inf", "NaN", "5.", ""} {
		f.Add(v, "", false, testNow.UnixNano())
		f.Add(v, "1500", true, testNow.UnixNano())
		f.Add("30", v, true, testNow.UnixNano())
	}
	f.Fuzz(func(t *testing.T, ra, ms string, sendMs bool, nowNs int64) {
		h, now := http.Header{"Retry-After": {ra}}, fuzzNow(nowNs)
		if sendMs {
			h.Set(retryAfterMillisHeader, ms)
		}
		p, ok, prob := RetryAfter(h, now)
		p2, ok2, prob2 := RetryAfter(h, now)
		if !reflect.DeepEqual(p, p2) || ok != ok2 || !reflect.DeepEqual(prob, prob2) {
			t.Fatalf("RetryAfter is not deterministic: %+v %v %+v, then %+v %v %+v", p, ok, prob, p2, ok2, prob2)
		}
		if !ok && prob == nil {
			t.Fatalf("Retry-After %q sent, yet neither a pause nor a problem", ra)
		}
		checkRetryAfter(t, h, now, &p, ok, prob)
		if ok && p.Header == "Retry-After" {
			if secs, reason := parseSeconds(p.Value); reason == "" {
				if got, want := p.Until.Sub(now), secondsToDuration(secs); got != want {
					t.Errorf("Retry-After %q: %v from now, want %v", p.Value, got, want)
				}
			}
		}
	})
}
