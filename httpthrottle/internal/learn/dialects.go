package learn

import (
	"net/http"
	"strings"
	"time"
)

// dialect is one row of the table of quota headers that name their
// numbers one header each (everything but the IETF structured fields).
type dialect struct {
	name, unit              string        // the quota's name, and what it counts
	limit, remaining, reset string        // the headers, canonical
	resetAfter              string        // a reset in decimal seconds from now that overrides reset (Discord)
	bucket                  string        // the header naming the server's bucket (Discord)
	used                    string        // what was used: limit = used + remaining when limit is not sent (Reddit)
	windowHeader            string        // the window in decimal seconds (tollbooth's X-Rate-Limit-Duration)
	window                  time.Duration // the window the headers' names say (Kong's -Minute)
	minWindow               time.Duration // the shortest window the server's documentation allows (Anthropic's: a minute)
	form                    resetForm
	listLimit               bool // the limit may list policies, `10, 10;w=1`: the first is in force
	policyFallback          bool // a spent quota without a reset waits RateLimit-Policy's longest window
	noReset                 bool // no reset is sent: a spent quota is no problem, the learned limit waits for it (Kong)
}

// dialects is the table Read goes through, in order. Each row is tested
// against real responses (testdata/captured; testdata/README.md says
// where each came from).
var dialects = append([]dialect{
	// IETF drafts up to -06; Kong and GitLab send these too.
	{name: "ratelimit", unit: unitRequests, limit: "RateLimit-Limit", remaining: "RateLimit-Remaining", reset: "RateLimit-Reset",
		listLimit: true, policyFallback: true},
	// GitHub (Unix seconds), Discord (fractions, -Reset-After, -Bucket),
	// Reddit (no limit: used + remaining; the reset in seconds from now).
	{name: "x-ratelimit", unit: unitRequests, limit: "X-RateLimit-Limit", remaining: "X-RateLimit-Remaining", reset: "X-RateLimit-Reset",
		resetAfter: "X-RateLimit-Reset-After", bucket: "X-RateLimit-Bucket", used: "X-RateLimit-Used"},
	// X (Twitter): Unix seconds; tollbooth: the limit per X-Rate-Limit-Duration seconds.
	{name: "x-rate-limit", unit: unitRequests, limit: "X-Rate-Limit-Limit", remaining: "X-Rate-Limit-Remaining", reset: "X-Rate-Limit-Reset",
		windowHeader: "X-Rate-Limit-Duration"},
	// OpenAI: a Go duration from now.
	{name: "requests", unit: unitRequests, limit: "X-Ratelimit-Limit-Requests", remaining: "X-Ratelimit-Remaining-Requests",
		reset: "X-Ratelimit-Reset-Requests", form: resetDuration},
	{name: "tokens", unit: unitTokens, limit: "X-Ratelimit-Limit-Tokens", remaining: "X-Ratelimit-Remaining-Tokens",
		reset: "X-Ratelimit-Reset-Tokens", form: resetDuration},
	// Anthropic: RFC 3339 instants, in whole seconds. Its limits are per
	// minute (RPM, ITPM, OTPM) and its buckets refill continuously, so a
	// full bucket's reset lies in the past (a second before the Date in
	// the captured answers): that says nothing of the window, which is
	// then a minute. The input and output token budgets are reported,
	// not kept: WithTokenEstimate has one number.
	anthropic("requests", unitRequests),
	anthropic("tokens", unitTokens),
	anthropic("input-tokens", "input tokens"),
	anthropic("output-tokens", "output tokens"),
}, kong()...)

func anthropic(what, unit string) dialect {
	p := "Anthropic-Ratelimit-" + http.CanonicalHeaderKey(what)
	return dialect{name: "anthropic-" + what, unit: unit, limit: p + "-Limit", remaining: p + "-Remaining", reset: p + "-Reset", form: resetRFC3339,
		minWindow: time.Minute}
}

// kong returns Kong's rows: X-RateLimit-Limit-Minute and the like, one
// per window its names say, with no reset of their own.
func kong() []dialect {
	var out []dialect
	for _, w := range []struct {
		name string
		d    time.Duration
	}{{"Second", time.Second}, {"Minute", time.Minute}, {"Hour", time.Hour}, {"Day", 24 * time.Hour}, {"Month", 30 * 24 * time.Hour}, {"Year", 365 * 24 * time.Hour}} {
		out = append(out, dialect{name: "kong-" + strings.ToLower(w.name), unit: unitRequests,
			limit: "X-RateLimit-Limit-" + w.name, remaining: "X-RateLimit-Remaining-" + w.name, window: w.d, noReset: true})
	}
	return out
}

// read reads d's headers of h as of now: the quota announced (ok when
// its limit was sent, or what was used and what is left, and is a count),
// the pause a spent quota asks for (nil if none), and what could not be
// used.
func (d *dialect) read(h http.Header, now time.Time, policies map[string]time.Duration) (a announcement, ok bool, pause *Pause, probs []*Problem) {
	report := func(p *Problem) {
		if p != nil {
			probs = append(probs, p)
		}
	}
	a = announcement{name: d.name, unit: d.unit, limit: -1, remaining: -1, header: d.limit, window: d.window, minWindow: d.minWindow}
	n, hasLimit := d.readCount(h, d.limit, report)
	rem, hasRem := d.readCount(h, d.remaining, report)
	if !hasLimit && hasRem && d.used != "" {
		n, hasLimit = d.readCount(h, d.used, report)
		n += rem
	}
	if wv, present := headerValue(h, d.windowHeader); d.windowHeader != "" && present {
		secs, reason := parseSeconds(wv)
		if reason != "" || secs <= 0 {
			report(malformed(d.windowHeader, wv, "not a positive number of seconds"))
		} else {
			a.window = secondsToDuration(secs)
			if hasLimit && n > 0 && n < 1 {
				// tollbooth's 0.5 per second is 1 per 2 seconds.
				a.window, n = secondsToDuration(secs/n), 1
			}
		}
	}
	if hasLimit {
		ok = true
		a.limit = int64(min(n, 1<<40))
		if n < 1 {
			report(malformed(d.limit, h.Get(d.limit), "a quota below 1 cannot be kept; only its reset is honoured"))
			a.limit = 0
		}
	}
	if hasRem {
		a.remaining = int64(min(rem, 1<<40))
	}
	resetHeader, resetValue, prob := d.readReset(h, now, &a)
	report(prob)
	if bv, present := headerValue(h, d.bucket); d.bucket != "" && present && bv != "" {
		a.bucket = bv
	}
	if !hasRem || rem >= 1 {
		return a, ok, nil, probs
	}
	switch {
	case !a.reset.IsZero():
		pause = &Pause{Header: resetHeader, Value: resetValue, Until: a.reset}
	case prob != nil, d.noReset:
	case d.policyFallback && longestWindow(policies) > 0:
		pause = &Pause{Header: "RateLimit-Policy", Value: h.Get("RateLimit-Policy"), Until: now.Add(longestWindow(policies))}
	default:
		report(malformed(d.remaining, h.Get(d.remaining), "quota spent but %s is missing, so its renewal is unknown", d.reset))
	}
	return a, ok, pause, probs
}

// readCount reads the count in header name, if sent and usable.
func (d *dialect) readCount(h http.Header, name string, report func(*Problem)) (float64, bool) {
	v, present := headerValue(h, name)
	if name == "" || !present {
		return 0, false
	}
	n, reason := d.parseLimit(v, name == d.limit)
	if reason != "" {
		report(malformed(name, v, "%s", d.countReason(reason)))
		return 0, false
	}
	return n, true
}

// parseLimit reads a count: the first member of a list where d allows
// one for its limit.
func (d *dialect) parseLimit(v string, limit bool) (float64, string) {
	if d.listLimit && limit {
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
