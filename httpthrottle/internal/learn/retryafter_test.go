package learn

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// testNow is a whole second, so that HTTP-dates (second resolution) land on
// exact offsets from it.
var testNow = time.Date(2026, time.January, 2, 15, 4, 5, 0, time.UTC)

func TestRetryAfter(t *testing.T) {
	steps := []struct {
		name   string
		header []string // nil: header absent
		ok     bool
		wait   time.Duration // until - testNow when ok
		reason string        // substring of the HeaderError's reason, "" for none
	}{
		{"absent", nil, false, 0, ""},
		{"seconds", []string{"120"}, true, 120 * time.Second, ""},
		{"zero", []string{"0"}, true, 0, ""},
		{"decimal", []string{"1.5"}, true, 1500 * time.Millisecond, ""},
		{"padded", []string{"  7 "}, true, 7 * time.Second, ""},
		{"IMF-fixdate", []string{"Fri, 02 Jan 2026 15:05:05 GMT"}, true, time.Minute, ""},
		{"RFC 850 date", []string{"Friday, 02-Jan-26 15:05:05 GMT"}, true, time.Minute, ""},
		{"asctime date", []string{"Fri Jan  2 15:05:05 2026"}, true, time.Minute, ""},
		{"IMF-fixdate in UTC (sethvargo/go-limiter)", []string{"Fri, 02 Jan 2026 15:05:05 UTC"}, true, time.Minute, ""},
		{"IMF-fixdate in another zone", []string{"Fri, 02 Jan 2026 15:05:05 PST"}, false, 0, "neither"},
		{"date in the past", []string{"Fri, 02 Jan 2026 15:00:00 GMT"}, true, -245 * time.Second, ""},
		{"484,289 hours", []string{"1743440400"}, true, 484289 * time.Hour, ""},
		{"beyond time.Duration", []string{"99999999999999999999999"}, true, time.Duration(math.MaxInt64), ""},
		{"negative", []string{"-5"}, false, 0, "negative delay"},
		{"negative decimal", []string{"-0.5"}, false, 0, "negative delay"},
		{"word", []string{"soon"}, false, 0, "neither delay-seconds nor an HTTP-date"},
		{"unit", []string{"5s"}, false, 0, "neither"},
		{"plus sign", []string{"+5"}, false, 0, "neither"},
		{"exponent", []string{"1e3"}, false, 0, "neither"},
		{"hex", []string{"0x10"}, false, 0, "neither"},
		{"infinity", []string{"Inf"}, false, 0, "neither"},
		{"trailing dot", []string{"5."}, false, 0, "neither"},
		{"empty", []string{""}, false, 0, "empty value"},
		{"date without zone", []string{"2026-01-02T15:05:05"}, false, 0, "neither"},
	}
	for i, s := range steps {
		h := http.Header{}
		if s.header != nil {
			h["Retry-After"] = s.header
		}
		hint, ok, herr := RetryAfter(h, testNow)
		assert.Equal(t, s.ok, ok, "step %d (%s): ok", i, s.name)
		if s.ok {
			assert.Equal(t, s.wait, hint.Until.Sub(testNow), "step %d (%s): wait", i, s.name)
			assert.Equal(t, "Retry-After", hint.Header, "step %d (%s)", i, s.name)
		}
		if s.reason == "" {
			assert.Nil(t, herr, "step %d (%s): error", i, s.name)
			continue
		}
		if assert.NotNil(t, herr, "step %d (%s): error", i, s.name) {
			assert.Contains(t, herr.Reason, s.reason, "step %d (%s)", i, s.name)
			assert.Equal(t, "Retry-After", herr.Header, "step %d (%s)", i, s.name)
		}
	}
}

func TestSecondsToDurationSaturates(t *testing.T) {
	assert.Equal(t, 30*time.Second, secondsToDuration(30))
	assert.Equal(t, 100*time.Millisecond, secondsToDuration(0.1))
	assert.Equal(t, time.Duration(math.MaxInt64), secondsToDuration(maxSeconds))
	assert.Equal(t, time.Duration(math.MaxInt64), secondsToDuration(math.Inf(1)))
	// Just below the threshold the product must stay positive (no wrap).
	assert.Positive(t, secondsToDuration(math.Nextafter(maxSeconds, 0)))
}
