package learn

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// errNotDecimal is parseSeconds' reason for a value that is not a number at
// all (as opposed to a negative one), so that callers can try other forms.
const errNotDecimal = "not a number of seconds"

// parseSeconds parses a non-negative decimal number of seconds: digits with
// at most one '.' ("30", "1.5"). Unlike strconv.ParseFloat it refuses signs,
// exponents, hex, "Inf" and "NaN", none of which a server means as a delay.
// It returns a reason instead of an error so callers can word their own
// Problem; the reason is "" on success.
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
