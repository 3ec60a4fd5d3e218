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
	f := &ietf{now: now, index: map[string]int{}}
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
		f.problem(name, v, "not a structured field: %v", err)
		return
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
		f.quotas = append(f.quotas, a)
	}
}

// readMember reads one member of the RateLimit List.
func (f *ietf) readMember(v string, m sfMember) {
	const name = "RateLimit"
	i, ok := f.index[m.item+"\x00"+m.params["pk"]]
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

// readDictionary reads the draft -07 form `limit=10, remaining=0, reset=30`.
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
	if rem >= 1 {
		return
	}
	sv, ok := fields["reset"]
	if !ok {
		f.problem(name, v, "quota spent but no reset member")
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
	f.pauses = append(f.pauses, Pause{Header: name, Value: v, Until: f.now.Add(secondsToDuration(secs))})
}
