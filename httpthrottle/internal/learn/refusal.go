package learn

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// The IETF problem types a server refuses with for its rate
// (draft-ietf-httpapi-ratelimit-headers, "Problem Types"; abnormal usage
// from draft -11), in an application/problem+json body (RFC 9457),
// whatever the status.
const (
	ProblemQuotaExceeded   = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	ProblemReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
	ProblemAbnormalUsage   = "https://iana.org/assignments/http-problem-types#abnormal-usage-detected"
)

const (
	problemMediaType       = "application/problem+json"
	shouldRetryHeader      = "X-Should-Retry"
	retryAfterMillisHeader = "Retry-After-Ms"
	maxProblemType         = 1 << 10 // a longer type is no type this package knows
)

// IsProblem reports whether resp may carry a problem type Refused reads:
// an error status with an application/problem+json body. Only then is
// the body's start read (ProblemType).
func IsProblem(resp *http.Response) bool {
	if resp.StatusCode < 400 {
		return false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == problemMediaType
}

// ProblemType returns the type member of a problem+json object whose
// start is start, "" if it has none there. The start may end anywhere
// (MaxProblemBody): the members are read in order up to the type, so a
// type sent before a long detail is found, and one after where the start
// ends is not.
func ProblemType(start []byte) string {
	dec := json.NewDecoder(bytes.NewReader(start))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		if key != "type" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return ""
			}
			continue
		}
		var typ string
		if dec.Decode(&typ) != nil || len(typ) > maxProblemType {
			return ""
		}
		return typ
	}
	return ""
}

// MaxProblemBody is how much of a problem+json body is read to find its
// type: the body is given back to the caller whole.
const MaxProblemBody = 4 << 10

// Refused reports whether an answer of status and problem type
// (ProblemType, "" for none) refused its request for the server's
// rate: 429 Too Many Requests; 503 Service Unavailable, with Retry-After or
// without (nginx's limit_req refuses with a bare 503 by default); or any
// error status whose problem type is quota-exceeded,
// temporary-reduced-capacity or abnormal-usage-detected.
func Refused(status int, problem string) bool {
	switch {
	case status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable:
		return true
	case status >= 400:
		return problem == ProblemQuotaExceeded || problem == ProblemReducedCapacity || problem == ProblemAbnormalUsage
	}
	return false
}

// ShouldRetry reports whether a refusal may be tried again: not when the
// server says x-should-retry: false (OpenAI's and Anthropic's APIs, for a
// quota that no wait renews).
func ShouldRetry(h http.Header) bool {
	return !strings.EqualFold(strings.TrimSpace(h.Get(shouldRetryHeader)), "false")
}
