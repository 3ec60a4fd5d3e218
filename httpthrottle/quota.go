package httpthrottle

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

// quotaHints reads the quota headers of h as of now and returns a hint for
// each quota the server says is spent (remaining below 1), paused until
// that quota's reset. It understands three dialects:
//
//   - X-RateLimit-Remaining + X-RateLimit-Reset (GitHub, Twitter, many
//     others), the reset in Unix seconds or in seconds from now (see
//     unixThreshold);
//   - RateLimit-Remaining + RateLimit-Reset of the IETF drafts up to -06,
//     read the same way; when the reset is missing, the largest window w of
//     RateLimit-Policy stands in for it;
//   - the structured RateLimit header of the later drafts, a List such as
//     `"default";r=0;t=30` (r remaining, t seconds to reset; a missing t is
//     replaced by the w of the RateLimit-Policy member of the same name), or
//     the Dictionary form of draft -07, `limit=10, remaining=0, reset=30`.
//
// Resets in the past ask for nothing. Unusable headers come back as errs.
func quotaHints(h http.Header, now time.Time) (hints []pauseHint, errs []*HeaderError) {
	add := func(hint pauseHint, ok bool, herr *HeaderError) {
		if herr != nil {
			errs = append(errs, herr)
		}
		if ok && hint.until.After(now) {
			hints = append(hints, hint)
		}
	}
	add(legacyQuota(h, now, "X-RateLimit-Remaining", "X-RateLimit-Reset", nil))
	policies, perr := policyWindows(h)
	if perr != nil {
		errs = append(errs, perr)
	}
	add(legacyQuota(h, now, "RateLimit-Remaining", "RateLimit-Reset", policies))
	sh, serrs := structuredQuota(h, now, policies)
	for _, hint := range sh {
		add(hint, true, nil)
	}
	return hints, append(errs, serrs...)
}

// legacyQuota reads one pair of Remaining/Reset headers. policies, when not
// nil, gives the windows to fall back on when the reset header is missing.
func legacyQuota(h http.Header, now time.Time, remName, resetName string, policies map[string]time.Duration) (pauseHint, bool, *HeaderError) {
	rv, present := headerValue(h, remName)
	if !present {
		return pauseHint{}, false, nil
	}
	rem, reason := parseSeconds(rv)
	if reason != "" {
		return pauseHint{}, false, malformed(remName, rv, "%s", countReason(reason))
	}
	if rem >= 1 {
		return pauseHint{}, false, nil
	}
	sv, present := headerValue(h, resetName)
	if !present {
		if w, ok := longestWindow(policies); ok {
			return pauseHint{header: "RateLimit-Policy", value: h.Get("RateLimit-Policy"), until: now.Add(w)}, true, nil
		}
		return pauseHint{}, false, malformed(remName, rv, "quota spent but %s is missing, so its renewal is unknown", resetName)
	}
	secs, reason := parseSeconds(sv)
	if reason != "" {
		return pauseHint{}, false, malformed(resetName, sv, "%s", reason)
	}
	return pauseHint{header: resetName, value: sv, until: resetTime(secs, now)}, true, nil
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

// structuredQuota reads the RateLimit header of the later IETF drafts.
func structuredQuota(h http.Header, now time.Time, policies map[string]time.Duration) ([]pauseHint, []*HeaderError) {
	const name = "RateLimit"
	v, present := headerValue(h, name)
	if !present {
		return nil, nil
	}
	members, err := parseMembers(v)
	if err != nil {
		return nil, []*HeaderError{malformed(name, v, "not a structured field: %v", err)}
	}
	if len(members) > 0 && members[0].key != "" {
		return dictionaryQuota(v, members, now)
	}
	var hints []pauseHint
	var errs []*HeaderError
	for _, m := range members {
		rv, ok := m.params["r"]
		if !ok {
			errs = append(errs, malformed(name, v, "policy %q has no r (remaining) parameter", m.item))
			continue
		}
		rem, reason := parseSeconds(rv)
		if reason != "" {
			errs = append(errs, malformed(name, v, "policy %q: r=%s: %s", m.item, rv, countReason(reason)))
			continue
		}
		if rem >= 1 {
			continue
		}
		var wait time.Duration
		if tv, ok := m.params["t"]; ok {
			secs, reason := parseSeconds(tv)
			if reason != "" {
				errs = append(errs, malformed(name, v, "policy %q: t=%s: %s", m.item, tv, reason))
				continue
			}
			wait = secondsToDuration(secs)
		} else if w, ok := policies[m.item]; ok {
			wait = w
		} else {
			errs = append(errs, malformed(name, v, "policy %q is spent but has no t parameter and no window in RateLimit-Policy", m.item))
			continue
		}
		hints = append(hints, pauseHint{header: name, value: v, until: now.Add(wait)})
	}
	return hints, errs
}

// dictionaryQuota reads the draft -07 form `limit=10, remaining=0, reset=30`.
func dictionaryQuota(v string, members []sfMember, now time.Time) ([]pauseHint, []*HeaderError) {
	const name = "RateLimit"
	fields := make(map[string]string, len(members))
	for _, m := range members {
		fields[m.key] = m.item
	}
	rv, ok := fields["remaining"]
	if !ok {
		return nil, []*HeaderError{malformed(name, v, "no remaining member")}
	}
	rem, reason := parseSeconds(rv)
	if reason != "" {
		return nil, []*HeaderError{malformed(name, v, "remaining=%s: %s", rv, countReason(reason))}
	}
	if rem >= 1 {
		return nil, nil
	}
	sv, ok := fields["reset"]
	if !ok {
		return nil, []*HeaderError{malformed(name, v, "quota spent but no reset member")}
	}
	secs, reason := parseSeconds(sv)
	if reason != "" {
		return nil, []*HeaderError{malformed(name, v, "reset=%s: %s", sv, reason)}
	}
	return []pauseHint{{header: name, value: v, until: now.Add(secondsToDuration(secs))}}, nil
}

// policyWindows maps each RateLimit-Policy member's name to its window w:
// `"default";q=100;w=60` (later drafts) or `100;w=60` (drafts up to -06,
// where the item is the quota and serves as the name). Members without w
// are left out. The map is nil when there is no such header.
func policyWindows(h http.Header) (map[string]time.Duration, *HeaderError) {
	const name = "RateLimit-Policy"
	v, present := headerValue(h, name)
	if !present {
		return nil, nil
	}
	members, err := parseMembers(v)
	if err != nil {
		return nil, malformed(name, v, "not a structured field: %v", err)
	}
	windows := make(map[string]time.Duration, len(members))
	for _, m := range members {
		wv, ok := m.params["w"]
		if !ok {
			continue
		}
		secs, reason := parseSeconds(wv)
		if reason != "" {
			return nil, malformed(name, v, "policy %q: w=%s: %s", m.item, wv, reason)
		}
		windows[m.item] = secondsToDuration(secs)
	}
	return windows, nil
}

// longestWindow returns the largest window of policies: when a legacy
// server does not say which quota is spent or when it renews, waiting for
// the longest one is the choice that cannot break any of them.
func longestWindow(policies map[string]time.Duration) (time.Duration, bool) {
	var longest time.Duration
	for _, w := range policies {
		longest = max(longest, w)
	}
	return longest, longest > 0
}

// headerValue returns the header's values joined as one list (a field may be
// sent on several lines) and whether the header is present at all.
func headerValue(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(strings.Join(vs, ", ")), true
}

// countReason rewords a parseSeconds reason for a count of requests.
func countReason(reason string) string {
	switch reason {
	case errNotDecimal:
		return "not a number of requests"
	case "negative delay":
		return "negative count"
	}
	return reason
}
