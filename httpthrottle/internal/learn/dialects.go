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
	// resetUnixOrDelta: Unix seconds or seconds from now, by unixThreshold.
	resetUnixOrDelta resetForm = iota
	// resetDuration: a Go duration from now ("1s", "6m0s", "850ms").
	resetDuration
)

// dialect is one row of the table of quota headers that name their
// numbers one header each (everything but the IETF structured fields).
type dialect struct {
	name, unit              string // the quota's name, and what it counts
	limit, remaining, reset string // the headers, canonical
	resetAfter              string // a reset in decimal seconds from now that overrides reset (Discord)
	bucket                  string // the header naming the server's bucket (Discord)
	form                    resetForm
	listLimit               bool // the limit may list policies, `10, 10;w=1`: the first is in force
	policyFallback          bool // a spent quota without a reset waits RateLimit-Policy's longest window
}

// dialects is the table Read goes through, in order.
var dialects = []dialect{
	{name: "ratelimit", unit: unitRequests, limit: "RateLimit-Limit", remaining: "RateLimit-Remaining", reset: "RateLimit-Reset",
		listLimit: true, policyFallback: true},
	{name: "x-ratelimit", unit: unitRequests, limit: "X-RateLimit-Limit", remaining: "X-RateLimit-Remaining", reset: "X-RateLimit-Reset",
		resetAfter: "X-RateLimit-Reset-After", bucket: "X-RateLimit-Bucket"},
	{name: "requests", unit: unitRequests, limit: "X-Ratelimit-Limit-Requests", remaining: "X-Ratelimit-Remaining-Requests",
		reset: "X-Ratelimit-Reset-Requests", form: resetDuration},
	{name: "tokens", unit: unitTokens, limit: "X-Ratelimit-Limit-Tokens", remaining: "X-Ratelimit-Remaining-Tokens",
		reset: "X-Ratelimit-Reset-Tokens", form: resetDuration},
}

// read reads d's headers of h as of now: the quota announced (ok when
// d.limit was sent and is a count), the pause a spent quota asks for
// (nil if none), and what could not be used.
func (d *dialect) read(h http.Header, now time.Time, policies map[string]time.Duration) (a announcement, ok bool, pause *Pause, probs []*Problem) {
	a = announcement{name: d.name, unit: d.unit, limit: -1, remaining: -1, header: d.limit}
	if lv, present := headerValue(h, d.limit); present {
		n, reason := d.parseLimit(lv)
		switch {
		case reason != "":
			probs = append(probs, malformed(d.limit, lv, "%s", d.countReason(reason)))
		case n < 1:
			probs = append(probs, malformed(d.limit, lv, "a quota below 1 cannot be kept; only its reset is honoured"))
			a.limit, ok = 0, true
		default:
			a.limit, ok = int64(min(n, 1<<40)), true
		}
	}
	rv, hasRem := headerValue(h, d.remaining)
	rem := math.Inf(1)
	if hasRem {
		r, reason := parseSeconds(rv)
		if reason != "" {
			probs = append(probs, malformed(d.remaining, rv, "%s", d.countReason(reason)))
			hasRem = false
		} else {
			rem, a.remaining = r, int64(min(r, 1<<40))
		}
	}
	resetHeader, resetValue, prob := d.readReset(h, now, &a)
	if prob != nil {
		probs = append(probs, prob)
	}
	if bv, present := headerValue(h, d.bucket); d.bucket != "" && present && bv != "" {
		a.bucket = bv
	}
	if !hasRem || rem >= 1 {
		return a, ok, nil, probs
	}
	switch {
	case !a.reset.IsZero():
		pause = &Pause{Header: resetHeader, Value: resetValue, Until: a.reset}
	case prob != nil:
	case d.policyFallback && longestWindow(policies) > 0:
		pause = &Pause{Header: "RateLimit-Policy", Value: h.Get("RateLimit-Policy"), Until: now.Add(longestWindow(policies))}
	default:
		probs = append(probs, malformed(d.remaining, rv, "quota spent but %s is missing, so its renewal is unknown", d.reset))
	}
	return a, ok, pause, probs
}

// parseLimit reads a count: the first member of a list where d allows one.
func (d *dialect) parseLimit(v string) (float64, string) {
	if d.listLimit {
		v, _, _ = strings.Cut(v, ",")
		v, _, _ = strings.Cut(v, ";")
		v = strings.TrimSpace(v)
	}
	return parseSeconds(v)
}

func (d *dialect) countReason(reason string) string {
	if d.unit != unitRequests && reason == errNotDecimal {
		return "not a number of " + d.unit
	}
	return countReason(reason)
}

// readReset sets a's reset from d's reset headers and returns the header
// and value it came from, or the problem with them.
func (d *dialect) readReset(h http.Header, now time.Time, a *announcement) (header, value string, prob *Problem) {
	if d.resetAfter != "" {
		if av, present := headerValue(h, d.resetAfter); present {
			secs, reason := parseSeconds(av)
			if reason != "" {
				prob = malformed(d.resetAfter, av, "%s", reason)
			} else {
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
	case resetDuration:
		dur, err := time.ParseDuration(sv)
		if err != nil || dur < 0 {
			return "", "", malformed(d.reset, sv, "not a non-negative duration such as 1s or 850ms")
		}
		a.reset = now.Add(dur)
	case resetUnixOrDelta:
		secs, reason := parseSeconds(sv)
		if reason != "" {
			return "", "", malformed(d.reset, sv, "%s", reason)
		}
		a.reset = resetTime(secs, now)
		a.coarse = secs >= unixThreshold && !strings.Contains(sv, ".")
		a.approx = secs < unixThreshold && !strings.Contains(sv, ".")
	}
	return d.reset, sv, prob
}

// resetTime reads a legacy reset value by the unixThreshold heuristic. A
// Unix time too far ahead for a time.Duration from now (9223372036854775807,
// 99999999999999999999, where int64(secs) would overflow and land in the
// past) saturates like a delay does, so the maximum pause applies to it and
// OnHeaderError hears of it.
func resetTime(secs float64, now time.Time) time.Time {
	if secs >= unixThreshold {
		if secs-float64(now.Unix()) >= maxSeconds {
			return now.Add(time.Duration(math.MaxInt64))
		}
		whole := int64(secs)
		return time.Unix(whole, int64((secs-float64(whole))*float64(time.Second)))
	}
	return now.Add(secondsToDuration(secs))
}

// longestWindow returns the largest window of policies: when a legacy
// server does not say which quota is spent or when it renews, waiting for
// the longest one is the choice that cannot break any of them.
func longestWindow(policies map[string]time.Duration) time.Duration {
	var longest time.Duration
	for _, w := range policies {
		longest = max(longest, w)
	}
	return longest
}
