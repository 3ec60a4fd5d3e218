package httpthrottle

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// pauseHint is one header's request that the client hold back until until.
type pauseHint struct {
	header string // canonical header name, e.g. "Retry-After"
	value  string // the raw value, for reports
	until  time.Time
}

// retryAfter reads the Retry-After header of h, if any, as of now.
//
// RFC 9110 allows delay-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015
// 07:28:00 GMT", or the obsolete RFC 850 and asctime forms that
// http.ParseTime also accepts). A decimal delay ("1.5") is accepted too,
// because some servers send one and honouring it is safer than ignoring it.
// A delay too large for a time.Duration saturates, so that the cap applies
// instead of an overflow. ok is false when the header is absent; herr is set
// when it is present but unusable (the hint is then zero).
func retryAfter(h http.Header, now time.Time) (hint pauseHint, ok bool, herr *HeaderError) {
	const name = "Retry-After"
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		if _, present := h[name]; present {
			return pauseHint{}, false, malformed(name, v, "empty value")
		}
		return pauseHint{}, false, nil
	}
	if secs, reason := parseSeconds(v); reason == "" {
		return pauseHint{header: name, value: v, until: now.Add(secondsToDuration(secs))}, true, nil
	} else if reason != errNotDecimal {
		return pauseHint{}, false, malformed(name, v, "%s", reason)
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return pauseHint{}, false, malformed(name, v, "neither delay-seconds nor an HTTP-date")
	}
	return pauseHint{header: name, value: v, until: at}, true, nil
}

// errNotDecimal is parseSeconds' reason for a value that is not a number at
// all (as opposed to a negative one), so that callers can try other forms.
const errNotDecimal = "not a number of seconds"

// parseSeconds parses a non-negative decimal number of seconds: digits with
// at most one '.' ("30", "1.5"). Unlike strconv.ParseFloat it refuses signs,
// exponents, hex, "Inf" and "NaN", none of which a server means as a delay.
// It returns a reason instead of an error so callers can word their own
// HeaderError; the reason is "" on success.
func parseSeconds(v string) (float64, string) {
	neg := strings.HasPrefix(v, "-")
	digits := strings.TrimPrefix(v, "-")
	if !isDecimal(digits) {
		return 0, errNotDecimal
	}
	if neg {
		return 0, "negative delay"
	}
	f, err := strconv.ParseFloat(digits, 64)
	if err != nil && !math.IsInf(f, 1) { // a 400-digit value is +Inf: saturate below
		return 0, errNotDecimal
	}
	return f, ""
}

// isDecimal reports whether s is 1*DIGIT [ "." 1*DIGIT ].
func isDecimal(s string) bool {
	intPart, frac, hasDot := strings.Cut(s, ".")
	return allDigits(intPart) && (!hasDot || allDigits(frac))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maxSeconds is where secondsToDuration saturates: 9e9 s (285 years) is
// safely below the largest time.Duration (2^63 ns, about 292 years), so the
// float product never rounds up past it.
const maxSeconds = 9e9

// secondsToDuration converts a non-negative number of seconds, saturating at
// the largest time.Duration instead of overflowing.
func secondsToDuration(secs float64) time.Duration {
	if secs >= maxSeconds {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(secs * float64(time.Second)))
}
