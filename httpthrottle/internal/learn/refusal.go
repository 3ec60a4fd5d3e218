package learn

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// The IETF problem types a server refuses with for its rate
// (draft-ietf-httpapi-ratelimit-headers, "Problem Types"), in an
// application/problem+json body (RFC 9457), whatever the status.
const (
	ProblemQuotaExceeded   = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	ProblemReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
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

// ProblemType returns the type member of a problem+json body's start,
// "" if it has none (or the start is not the whole object).
func ProblemType(start []byte) string {
	var p struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(start, &p) != nil || len(p.Type) > maxProblemType {
		return ""
	}
	return p.Type
}

// MaxProblemBody is how much of a problem+json body is read to find its
// type: the body is given back to the caller whole.
const MaxProblemBody = 4 << 10

// Refused reports whether an answer of status and problem type
// (ProblemType, "" for none) refused its request for the server's
// rate: 429 Too Many Requests; 503 Service Unavailable, with Retry-After or
// without (nginx's limit_req refuses with a bare 503 by default); or any
// error status whose problem type is quota-exceeded or
// temporary-reduced-capacity.
func Refused(status int, problem string) bool {
	switch {
	case status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable:
		return true
	case status >= 400:
		return problem == ProblemQuotaExceeded || problem == ProblemReducedCapacity
	}
	return false
}

// ShouldRetry reports whether a refusal may be tried again: not when the
// server says x-should-retry: false (OpenAI's and Anthropic's APIs, for a
// quota that no wait renews).
func ShouldRetry(h http.Header) bool {
	return !strings.EqualFold(strings.TrimSpace(h.Get(shouldRetryHeader)), "false")
}
