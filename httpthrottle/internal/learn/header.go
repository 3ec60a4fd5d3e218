package learn

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Pause is one header's request that the client hold back until Until.
type Pause struct {
	Header string // canonical header name, e.g. "Retry-After"
	Value  string // the raw value, for reports
	Until  time.Time
}

// Problem is a header that could not be used: the Transport reports it as
// a HeaderError wrapping ErrMalformedHeader.
type Problem struct {
	Header, Value, Reason string
}

func malformed(header, value, format string, args ...any) *Problem {
	return &Problem{Header: header, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// Reading is what one response's headers say, read once (Read): the
// pauses a spent quota asks for, the pause Retry-After asks for, the
// quotas announced (for the learner), and the headers that could not be
// used.
type Reading struct {
	Pauses   []Pause
	Problems []*Problem
	// RetryAfter is the pause Retry-After or retry-after-ms asks for (nil
	// if neither is sent and usable), and RetryAfterProblem the reason one
	// sent could not be used. The Transport obeys and reports them on a
	// refusal only: on a redirect or an accepted answer (Anthropic sends
	// retry-after on a 200) the header means something else.
	RetryAfter        *Pause
	RetryAfterProblem *Problem
	// Refused says the answer refused its request for the server's rate
	// (Refused); the caller sets it.
	Refused bool
	// Sent is when the request went out (the caller sets it; zero if not
	// known): a reset the server gives relative to its own now, read
	// relative to the caller's, is late by up to the round trip since.
	Sent   time.Time
	quotas []announcement
}

// announcement is one quota a response announced, in any dialect: what a
// learning Transport learns its limits from. Unknown numbers are -1
// (counts) or 0 (durations, instants).
type announcement struct {
	name      string        // the policy's name: "default", "x-ratelimit", "requests", "tokens"
	bucket    string        // the bucket the server names (Discord's id, the IETF pk); "" if none
	unit      string        // "requests", or what the server counts instead (tokens, bytes)
	limit     int64         // N, the quota; -1 when only what is left was sent
	window    time.Duration // W, when the server says it
	minWindow time.Duration // the shortest W the dialect allows (Anthropic's minute); 0 for none
	remaining int64
	reset     time.Time     // when the quota is whole again
	coarse    bool          // reset came in whole Unix seconds: true to within a second only
	approx    bool          // reset came in whole seconds from now: up to a second late, no window boundary
	header    string        // the header the quota came from, for reports
	late      time.Duration // how late reset may have been read: the answer's round trip (Reading.Sent), 0 if not known
}

// unitRequests is the unit of a quota that counts requests, the only one a
// Transport can keep by itself.
const unitRequests = "requests"

// unitTokens is the unit of a token budget (OpenAI's, Anthropic's), kept
// with the callers' help (WithTokenEstimate, ReportTokens).
const unitTokens = "tokens"

// Read reads every quota header of h as of now, in every dialect of the
// table (dialects) and the IETF structured fields, and Retry-After
// (RetryAfter): each header once. A spent quota (less
// than one left) with a reset ahead gives a Pause until its reset; a
// value it cannot use is a Problem and leaves its quota out.
func Read(h http.Header, now time.Time) Reading {
	var r Reading
	if p, ok, prob := RetryAfter(h, now); ok {
		r.RetryAfter = &p
	} else {
		r.RetryAfterProblem = prob
	}
	f := readIETF(h, now)
	r.quotas = f.quotas
	for i := range dialects {
		a, ok, pause, probs := dialects[i].read(h, now, f.windows)
		r.Problems = append(r.Problems, probs...)
		if pause != nil && pause.Until.After(now) {
			r.Pauses = append(r.Pauses, *pause)
		}
		if ok {
			r.quotas = append(r.quotas, a)
		}
	}
	for _, p := range f.pauses {
		if p.Until.After(now) {
			r.Pauses = append(r.Pauses, p)
		}
	}
	r.Problems = append(r.Problems, f.problems...)
	return r
}

// RetryAfter reads the Retry-After header of h, if any, as of now.
//
// RFC 9110 allows delay-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015
// 07:28:00 GMT", or the obsolete RFC 850 and asctime forms that
// http.ParseTime also accepts; "UTC" for "GMT" is read too, parseHTTPDate). A decimal delay ("1.5") is accepted too,
// because some servers send one and honouring it is safer than ignoring it.
// A delay too large for a time.Duration saturates, so that the cap applies
// instead of an overflow. retry-after-ms (milliseconds), when sent and
// usable, is read instead. ok is false when neither is sent; prob is set
// when one is present but unusable (the pause is then zero).
func RetryAfter(h http.Header, now time.Time) (p Pause, ok bool, prob *Problem) {
	if v, present := headerValue(h, retryAfterMillisHeader); present {
		// OpenAI's and Anthropic's retry-after-ms, which their SDKs
		// prefer to Retry-After: the same wait to the millisecond.
		if ms, reason := parseSeconds(v); reason == "" {
			return Pause{Header: retryAfterMillisHeader, Value: v, Until: now.Add(secondsToDuration(ms / 1000))}, true, nil
		}
		prob = malformed(retryAfterMillisHeader, v, "not a number of milliseconds")
	}
	p, ok, rprob := retryAfter(h, now)
	if rprob != nil || prob == nil {
		prob = rprob
	}
	return p, ok, prob
}

func retryAfter(h http.Header, now time.Time) (p Pause, ok bool, prob *Problem) {
	const name = "Retry-After"
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		if _, present := h[name]; present {
			return Pause{}, false, malformed(name, v, "empty value")
		}
		return Pause{}, false, nil
	}
	if secs, reason := parseSeconds(v); reason == "" {
		return Pause{Header: name, Value: v, Until: now.Add(secondsToDuration(secs))}, true, nil
	} else if reason != errNotDecimal {
		return Pause{}, false, malformed(name, v, "%s", reason)
	}
	at, ok := parseHTTPDate(v)
	if !ok {
		return Pause{}, false, malformed(name, v, "neither delay-seconds nor an HTTP-date")
	}
	return Pause{Header: name, Value: v, Until: at}, true, nil
}

// parseHTTPDate reads an HTTP-date (RFC 9110: the IMF-fixdate, or the
// obsolete RFC 850 and asctime forms http.ParseTime takes too), or the
// IMF-fixdate with "UTC" for "GMT", as sethvargo/go-limiter writes its
// Retry-After and X-RateLimit-Reset (time.RFC1123 of a UTC time).
func parseHTTPDate(v string) (time.Time, bool) {
	if at, err := http.ParseTime(v); err == nil {
		return at, true
	}
	if at, err := time.Parse(time.RFC1123, v); err == nil && at.Location() == time.UTC {
		return at, true
	}
	return time.Time{}, false
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
