package learn

import (
	"net/http"
	"strings"
	"time"
)

// ietf is what the IETF structured fields of one response say.
type ietf struct {
	now      time.Time
	quotas   []announcement
	index    map[string]int           // quotas by name + "\x00" + partition key
	byName   map[string][]int         // RateLimit-Policy's quotas by name, whatever their partition key
	windows  map[string]time.Duration // RateLimit-Policy's w by policy name; nil without the header
	pauses   []Pause
	problems []*Problem
}

// readIETF reads RateLimit-Policy (`"default";q=100;w=60;qu="requests";pk=:..:`,
// or `100;w=60` of the drafts up to -06, where the item is the quota) and
// RateLimit: the List of the later drafts (`"default";r=50;t=30`, joined to
// the policies by name and partition key; a missing t is replaced by the w
// of the policy of the same name), or the Dictionary of draft -07
// (`limit=10, remaining=0, reset=30`), which gives pauses only.
func readIETF(h http.Header, now time.Time) *ietf {
	f := &ietf{now: now, index: map[string]int{}, byName: map[string][]int{}}
	if v, present := headerValue(h, "RateLimit-Policy"); present {
		f.readPolicy(v)
	}
	v, present := headerValue(h, "RateLimit")
	if !present {
		return f
	}
	members, err := parseMembers(v)
	switch {
	case err != nil:
		f.problems = append(f.problems, malformed("RateLimit", v, "not a structured field: %v", err))
	case len(members) > 0 && members[0].key != "":
		f.readDictionary(v, members)
	default:
		for _, m := range members {
			f.readMember(v, m)
		}
	}
	return f
}

func (f *ietf) problem(header, value, format string, args ...any) {
	f.problems = append(f.problems, malformed(header, value, format, args...))
}

func (f *ietf) readPolicy(v string) {
	const name = "RateLimit-Policy"
	members, err := parseMembers(v)
	if err != nil {
		// Hugging Face's `"fixed window";"api";q=500;w=300`: a second
		// string where RFC 9651 allows only parameters. Read leniently,
		// the last string naming the policy, rather than not at all.
		lenient, lerr := parseLenientList(v)
		if lerr != nil {
			f.problem(name, v, "not a structured field: %v", err)
			return
		}
		members = lenient
	}
	f.windows = make(map[string]time.Duration, len(members))
	for _, m := range members {
		a := announcement{name: m.item, bucket: m.params["pk"], unit: unitRequests, limit: -1, remaining: -1, header: name}
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
			f.problem(name, v, "policy %q: q=%s: %s", m.item, qv, countReason(reason))
			continue
		case q < 1:
			f.problem(name, v, "policy %q: q=%s: a quota below 1 cannot be kept; only its reset is honoured", m.item, qv)
			q = 0
		}
		a.limit = int64(min(q, 1<<40))
		if wv, ok := m.params["w"]; ok {
			secs, reason := parseSeconds(wv)
			switch {
			case reason != "":
				f.problem(name, v, "policy %q: w=%s: %s", m.item, wv, reason)
			case secs > 0:
				a.window = secondsToDuration(secs)
				f.windows[m.item] = a.window
			default:
				f.problem(name, v, "policy %q: w=%s: a window must be positive", m.item, wv)
			}
		}
		f.index[a.name+"\x00"+a.bucket] = len(f.quotas)
		f.byName[a.name] = append(f.byName[a.name], len(f.quotas))
		f.quotas = append(f.quotas, a)
	}
}

// readMember reads one member of the RateLimit List.
func (f *ietf) readMember(v string, m sfMember) {
	const name = "RateLimit"
	i, ok := f.policyOf(m.item, m.params["pk"])
	if !ok {
		i = len(f.quotas)
		f.index[m.item+"\x00"+m.params["pk"]] = i
		f.quotas = append(f.quotas, announcement{name: m.item, bucket: m.params["pk"], unit: unitRequests, limit: -1, remaining: -1, header: name})
	}
	a := &f.quotas[i]
	rv, ok := m.params["r"]
	if !ok {
		f.problem(name, v, "policy %q has no r (remaining) parameter", m.item)
		return
	}
	rem, reason := parseSeconds(rv)
	if reason != "" {
		f.problem(name, v, "policy %q: r=%s: %s", m.item, rv, countReason(reason))
		return
	}
	a.remaining = int64(min(rem, 1<<40))
	wait, hasT := time.Duration(0), false
	if tv, ok := m.params["t"]; ok {
		secs, reason := parseSeconds(tv)
		if reason == "" && !plausibleDelta(secs) {
			reason = implausible
		}
		if reason != "" {
			f.problem(name, v, "policy %q: t=%s: %s", m.item, tv, reason)
			return
		}
		wait, hasT = secondsToDuration(secs), true
		a.reset, a.approx = f.now.Add(wait), !strings.Contains(tv, ".")
	}
	if rem >= 1 {
		return
	}
	if !hasT {
		w, ok := f.windows[m.item]
		if !ok {
			f.problem(name, v, "policy %q is spent but has no t parameter and no window in RateLimit-Policy", m.item)
			return
		}
		wait = w
	}
	f.pauses = append(f.pauses, Pause{Header: name, Value: v, Until: f.now.Add(wait)})
}

// policyOf returns the index of the quota of RateLimit-Policy that a
// RateLimit member of name and partition key pk stands for: the one of the
// same name and key, or, when the member sends no key, the only policy of
// its name (express-rate-limit's draft-8 mode sends pk in RateLimit-Policy
// only).
func (f *ietf) policyOf(name, pk string) (int, bool) {
	if i, ok := f.index[name+"\x00"+pk]; ok {
		return i, true
	}
	if same := f.byName[name]; pk == "" && len(same) == 1 {
		return same[0], true
	}
	return 0, false
}

// readDictionary reads the draft -07 form `limit=10, remaining=0, reset=30`
// (express-rate-limit's draft-7 mode, beside `RateLimit-Policy: 10;w=60`):
// the quota of the only policy, or, with none, a quota of its own named
// "default", gets its remaining and reset; a spent one gives a pause.
func (f *ietf) readDictionary(v string, members []sfMember) {
	const name = "RateLimit"
	fields := make(map[string]string, len(members))
	for _, m := range members {
		fields[m.key] = m.item
	}
	rv, ok := fields["remaining"]
	if !ok {
		f.problem(name, v, "no remaining member")
		return
	}
	rem, reason := parseSeconds(rv)
	if reason != "" {
		f.problem(name, v, "remaining=%s: %s", rv, countReason(reason))
		return
	}
	a := f.dictionaryQuota(v, fields["limit"])
	if a != nil {
		a.remaining = int64(min(rem, 1<<40))
	}
	sv, ok := fields["reset"]
	if !ok {
		if rem < 1 {
			f.problem(name, v, "quota spent but no reset member")
		}
		return
	}
	secs, reason := parseSeconds(sv)
	if reason == "" && !plausibleDelta(secs) {
		reason = implausible
	}
	if reason != "" {
		f.problem(name, v, "reset=%s: %s", sv, reason)
		return
	}
	if a != nil {
		a.reset, a.approx = f.now.Add(secondsToDuration(secs)), !strings.Contains(sv, ".")
	}
	if rem < 1 {
		f.pauses = append(f.pauses, Pause{Header: name, Value: v, Until: f.now.Add(secondsToDuration(secs))})
	}
}

// dictionaryQuota returns the quota a draft -07 RateLimit Dictionary
// reports on: RateLimit-Policy's only one, or the only one whose quota is
// the Dictionary's limit lv (the draft's `10;w=1, 100;w=3600` with
// `limit=100, ...`); with no policy, a new one of lv; nil when none fits.
func (f *ietf) dictionaryQuota(v, lv string) *announcement {
	if len(f.quotas) == 1 {
		return &f.quotas[0]
	}
	if lv == "" {
		return nil
	}
	n, reason := parseSeconds(lv)
	switch {
	case reason != "":
		f.problem("RateLimit", v, "limit=%s: %s", lv, countReason(reason))
		return nil
	case n < 1:
		f.problem("RateLimit", v, "limit=%s: a quota below 1 cannot be kept; only its reset is honoured", lv)
		return nil
	}
	limit := int64(min(n, 1<<40))
	if len(f.quotas) > 1 {
		var match *announcement
		for i := range f.quotas {
			if f.quotas[i].limit == limit {
				if match != nil {
					return nil
				}
				match = &f.quotas[i]
			}
		}
		return match
	}
	f.quotas = append(f.quotas, announcement{name: "default", unit: unitRequests, limit: limit, remaining: -1, header: "RateLimit"})
	return &f.quotas[len(f.quotas)-1]
}
