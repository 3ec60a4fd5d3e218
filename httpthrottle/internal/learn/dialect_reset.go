package learn

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// unixThreshold decides how a legacy reset header (X-RateLimit-Reset,
// RateLimit-Reset) is read. Servers disagree: GitHub sends Unix seconds
// ("1700000000"), others (and the IETF drafts) send seconds from now ("30").
// A value of at least 1e9 is read as Unix seconds: as a delay it would be
// over 31 years, and as a Unix time anything smaller lies before September
// 2001, so neither reading of the other side is plausible.
const unixThreshold = 1e9

// resetForm is how a dialect writes its reset.
type resetForm int

const (
	// resetUnixOrDelta: Unix seconds or seconds from now, by unixThreshold
	// (or an HTTP-date: sethvargo/go-limiter).
	resetUnixOrDelta resetForm = iota
	// resetDuration: a Go duration from now ("1s", "6m0s", "850ms").
	resetDuration
	// resetRFC3339: an instant, "2026-01-02T15:04:05Z" (Anthropic).
	resetRFC3339
)

// readReset sets a's reset from d's reset headers and returns the header
// and value it came from, or the problem with them.
func (d *dialect) readReset(h http.Header, now time.Time, a *announcement) (header, value string, prob *Problem) {
	if d.resetAfter != "" {
		if av, present := headerValue(h, d.resetAfter); present {
			secs, reason := parseSeconds(av)
			switch {
			case reason != "":
				prob = malformed(d.resetAfter, av, "%s", reason)
			case !plausibleDelta(secs):
				prob = malformed(d.resetAfter, av, implausible)
			default:
				a.reset = now.Add(secondsToDuration(secs))
				return d.resetAfter, av, nil
			}
		}
	}
	sv, present := headerValue(h, d.reset)
	if !present {
		return "", "", prob
	}
	switch d.form {
	case resetRFC3339:
		at, err := time.Parse(time.RFC3339Nano, sv)
		if err != nil {
			return "", "", malformed(d.reset, sv, "not an RFC 3339 instant such as 2026-01-02T15:04:05Z")
		}
		if at.Sub(now).Abs() > maxPlausibleReset {
			return "", "", malformed(d.reset, sv, implausible)
		}
		a.reset, a.coarse = at, at.Nanosecond() == 0
	case resetDuration:
		dur, err := time.ParseDuration(sv)
		if err != nil || dur < 0 {
			return "", "", malformed(d.reset, sv, "not a non-negative duration such as 1s or 850ms")
		}
		if dur > maxPlausibleReset {
			return "", "", malformed(d.reset, sv, implausible)
		}
		a.reset = now.Add(dur)
	case resetUnixOrDelta:
		secs, reason := parseSeconds(sv)
		if reason == errNotDecimal {
			return d.readDateReset(sv, now, a)
		}
		if reason != "" {
			return "", "", malformed(d.reset, sv, "%s", reason)
		}
		at, ok := resetTime(secs, now)
		if !ok {
			return "", "", malformed(d.reset, sv, implausible)
		}
		a.reset = at
		a.coarse = secs >= unixThreshold && !strings.Contains(sv, ".")
		a.approx = secs < unixThreshold && !strings.Contains(sv, ".")
	}
	return d.reset, sv, prob
}

// readDateReset reads a legacy reset sent as an HTTP-date
// (sethvargo/go-limiter's X-RateLimit-Reset): true to within the second
// it is truncated to, like Unix seconds.
func (d *dialect) readDateReset(sv string, now time.Time, a *announcement) (header, value string, prob *Problem) {
	at, ok := parseHTTPDate(sv)
	switch {
	case !ok:
		return "", "", malformed(d.reset, sv, "neither a number of seconds nor an HTTP-date")
	case at.Sub(now).Abs() > maxPlausibleReset:
		return "", "", malformed(d.reset, sv, implausible)
	}
	a.reset, a.coarse = at, true
	return d.reset, sv, nil
}

// maxPlausibleReset is the farthest a reset may lie from now and be read
// as one: a little over a year, beyond the longest quota windows in use
// (a month's, a year's). A value beyond it in every reading (an overflow,
// a counter of something else) is reported and left out: its quota then
// has no reset, and the learner finds the window from refusals and the
// other resets, instead of pausing to the cap and keeping one request per
// maximum pause.
const maxPlausibleReset = 400 * 24 * time.Hour

// resetTime reads a legacy reset value by plausibility against the clock:
// below unixThreshold, seconds from now; above it an instant since 1970 in
// seconds (GitHub), milliseconds, microseconds or nanoseconds, whichever
// reading lies nearest now. ok is false when the reading lies farther
// than maxPlausibleReset from now.
func resetTime(secs float64, now time.Time) (time.Time, bool) {
	if secs < unixThreshold {
		if secs > maxPlausibleReset.Seconds() {
			return time.Time{}, false
		}
		return now.Add(secondsToDuration(secs)), true
	}
	nowSecs := float64(now.UnixNano()) / 1e9
	best, dist := 0.0, math.Inf(1)
	for _, unit := range []float64{1, 1e3, 1e6, 1e9} {
		if d := math.Abs(secs/unit - nowSecs); d < dist {
			best, dist = secs/unit, d
		}
	}
	if dist > maxPlausibleReset.Seconds() {
		return time.Time{}, false
	}
	whole := math.Floor(best)
	return time.Unix(int64(whole), int64((best-whole)*1e9)), true
}

// plausibleDelta reports whether a reset secs seconds from now is one.
func plausibleDelta(secs float64) bool { return secs <= maxPlausibleReset.Seconds() }

const implausible = "not a plausible reset: more than 400 days from now in every unit"
