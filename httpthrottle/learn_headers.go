package httpthrottle

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// announcement is one quota a response announced, in any dialect: what a
// Transport with WithLearnLimits learns its limits from. Unknown numbers
// are -1 (counts) or 0 (durations, instants).
type announcement struct {
	name      string        // the policy's name: "default", "x-ratelimit", "requests", "tokens"
	bucket    string        // the bucket the server names (Discord's id, the IETF pk); "" if none
	unit      string        // "requests", or what the server counts instead (tokens, bytes)
	limit     int64         // N, the quota
	window    time.Duration // W, when the server says it
	remaining int64
	reset     time.Time // when the quota is whole again
	coarse    bool      // reset came in whole Unix seconds: true to within a second only
	approx    bool      // reset came in whole seconds from now: up to a second late, no window boundary
	header    string    // the header the quota came from, for reports
}

// unitRequests is the unit of a quota that counts requests, the only one a
// Transport can keep by itself.
const unitRequests = "requests"

// unitTokens is the unit of OpenAI's token budget, kept with the callers'
// help (WithTokenEstimate, ReportTokens).
const unitTokens = "tokens"

// announcements reads every quota h announces as of now. It reads:
//
//   - the IETF fields RateLimit-Policy (`"default";q=100;w=60;qu="requests";pk=:..:`)
//     and RateLimit (`"default";r=50;t=30`), joined by name;
//   - the older RateLimit-Limit, -Remaining, -Reset (drafts up to -06);
//   - X-RateLimit-Limit, -Remaining, -Reset (GitHub: Unix seconds), with
//     Discord's -Reset-After (seconds from now, decimal) and -Bucket;
//   - OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens},
//     the reset a Go duration ("1s", "6m0s", "850ms").
//
// A value it cannot use is reported in errs and that quota left out; the
// Remaining/Reset values quotaHints already judges are not reported twice.
func announcements(h http.Header, now time.Time) (out []announcement, errs []*HeaderError) {
	out, errs = ietfAnnouncements(h, now)
	if a, ok, herr := legacyAnnouncement(h, now, "RateLimit"); ok {
		out = append(out, a)
	} else if herr != nil {
		errs = append(errs, herr)
	}
	if a, ok, herr := legacyAnnouncement(h, now, "X-RateLimit"); ok {
		out = append(out, a)
	} else if herr != nil {
		errs = append(errs, herr)
	}
	for _, unit := range []string{"requests", "tokens"} {
		if a, ok, herr := openAIAnnouncement(h, now, unit); ok {
			out = append(out, a)
		} else if herr != nil {
			errs = append(errs, herr)
		}
	}
	return out, errs
}

// ietfAnnouncements joins RateLimit-Policy and the structured RateLimit by
// policy name (and partition key).
func ietfAnnouncements(h http.Header, now time.Time) ([]announcement, []*HeaderError) {
	var out []announcement
	var errs []*HeaderError
	index := map[string]int{}
	if v, present := headerValue(h, "RateLimit-Policy"); present {
		members, err := parseMembers(v)
		if err != nil {
			return nil, nil // quotaHints reports it
		}
		for _, m := range members {
			a := announcement{name: m.item, bucket: m.params["pk"], unit: unitRequests, limit: -1, remaining: -1, header: "RateLimit-Policy"}
			if qu, ok := m.params["qu"]; ok {
				a.unit = qu
			}
			qv, ok := m.params["q"]
			if !ok {
				qv = m.item // drafts up to -06: `100;w=60`, the item is the quota
			}
			q, reason := parseSeconds(qv)
			switch {
			case reason != "":
				errs = append(errs, malformed("RateLimit-Policy", v, "policy %q: q=%s: %s", m.item, qv, countReason(reason)))
				continue
			case q < 1:
				errs = append(errs, malformed("RateLimit-Policy", v, "policy %q: q=%s: a quota below 1 cannot be kept; only its reset is honoured", m.item, qv))
				q = 0
			}
			a.limit = int64(min(q, 1<<40))
			if wv, ok := m.params["w"]; ok {
				secs, reason := parseSeconds(wv)
				if reason == "" && secs > 0 {
					a.window = secondsToDuration(secs)
				} else if reason == "" {
					errs = append(errs, malformed("RateLimit-Policy", v, "policy %q: w=%s: a window must be positive", m.item, wv))
				}
			}
			index[a.name+"\x00"+a.bucket] = len(out)
			out = append(out, a)
		}
	}
	v, present := headerValue(h, "RateLimit")
	if !present {
		return out, errs
	}
	members, err := parseMembers(v)
	if err != nil || (len(members) > 0 && members[0].key != "") {
		return out, errs // garbled (quotaHints reports it) or the draft -07 Dictionary
	}
	for _, m := range members {
		i, ok := index[m.item+"\x00"+m.params["pk"]]
		if !ok {
			i = len(out)
			out = append(out, announcement{name: m.item, bucket: m.params["pk"], unit: unitRequests, limit: -1, remaining: -1, header: "RateLimit"})
		}
		a := &out[i]
		if r, reason := parseSeconds(m.params["r"]); reason == "" {
			a.remaining = int64(min(r, 1<<40))
		}
		if t, reason := parseSeconds(m.params["t"]); reason == "" {
			a.reset, a.approx = now.Add(secondsToDuration(t)), !strings.Contains(m.params["t"], ".")
		}
	}
	return out, errs
}

// legacyAnnouncement reads prefix-Limit, -Remaining and -Reset (prefix
// "RateLimit" or "X-RateLimit"), and for X-RateLimit Discord's
// -Reset-After and -Bucket. ok is false when prefix-Limit is absent.
func legacyAnnouncement(h http.Header, now time.Time, prefix string) (a announcement, ok bool, herr *HeaderError) {
	name := prefix + "-Limit"
	lv, present := headerValue(h, name)
	if !present {
		return a, false, nil
	}
	// RateLimit-Limit of draft -03 may list policies: `10, 10;w=1`: the
	// first member is the quota in force.
	first, _, _ := strings.Cut(lv, ",")
	first, _, _ = strings.Cut(first, ";")
	n, reason := parseSeconds(strings.TrimSpace(first))
	if reason != "" {
		return a, false, malformed(name, lv, "%s", countReason(reason))
	}
	a = announcement{name: strings.ToLower(prefix), unit: unitRequests, limit: int64(min(n, 1<<40)), remaining: -1, header: name}
	if n < 1 {
		herr = malformed(name, lv, "a quota below 1 cannot be kept; only its reset is honoured")
		a.limit = 0
	}
	if rv, present := headerValue(h, prefix+"-Remaining"); present {
		if r, reason := parseSeconds(rv); reason == "" {
			a.remaining = int64(min(r, 1<<40))
		}
	}
	if sv, present := headerValue(h, prefix+"-Reset"); present {
		if secs, reason := parseSeconds(sv); reason == "" {
			a.reset = resetTime(secs, now)
			a.coarse = secs >= unixThreshold && !strings.Contains(sv, ".")
			a.approx = secs < unixThreshold && !strings.Contains(sv, ".")
		}
	}
	if prefix == "X-RateLimit" {
		if av, present := headerValue(h, "X-RateLimit-Reset-After"); present {
			if secs, reason := parseSeconds(av); reason == "" {
				a.reset, a.coarse, a.approx = now.Add(secondsToDuration(secs)), false, false
			} else {
				herr = malformed("X-RateLimit-Reset-After", av, "%s", reason)
			}
		}
		if bv, present := headerValue(h, "X-RateLimit-Bucket"); present && bv != "" {
			a.bucket = bv
		}
	}
	return a, true, herr
}

// openAIAnnouncement reads x-ratelimit-limit-<unit>, -remaining-<unit> and
// -reset-<unit>. ok is false when the limit is absent.
func openAIAnnouncement(h http.Header, now time.Time, unit string) (a announcement, ok bool, herr *HeaderError) {
	name := "X-Ratelimit-Limit-" + strings.ToUpper(unit[:1]) + unit[1:]
	lv, present := headerValue(h, name)
	if !present {
		return a, false, nil
	}
	n, err := strconv.ParseInt(lv, 10, 64)
	if err != nil || n < 0 {
		return a, false, malformed(name, lv, "not a number of %s", unit)
	}
	a = announcement{name: unit, unit: unit, limit: n, remaining: -1, header: name}
	if n < 1 {
		herr = malformed(name, lv, "a quota below 1 cannot be kept; only its reset is honoured")
	}
	rname := "X-Ratelimit-Remaining-" + name[len("X-Ratelimit-Limit-"):]
	if rv, present := headerValue(h, rname); present {
		if r, err := strconv.ParseInt(rv, 10, 64); err == nil && r >= 0 {
			a.remaining = r
		}
	}
	sname := "X-Ratelimit-Reset-" + name[len("X-Ratelimit-Limit-"):]
	if sv, present := headerValue(h, sname); present {
		d, err := time.ParseDuration(sv)
		if err != nil || d < 0 {
			return a, true, malformed(sname, sv, "not a non-negative duration such as 1s or 850ms")
		}
		a.reset = now.Add(d)
	}
	return a, true, herr
}
