package learn

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestProblemType: the type member of a problem+json body's start is found
// before wherever the start ends (a long detail after it, cut at
// MaxProblemBody), and only at the object's top level.
func TestProblemType(t *testing.T) {
	long := strings.Repeat("x", 2*MaxProblemBody)
	cut := func(s string) string { return s[:min(len(s), MaxProblemBody)] }
	cases := []struct {
		name, body, want string
	}{
		{"whole", `{"type":"` + ProblemQuotaExceeded + `","violated-policies":["daily"]}`, ProblemQuotaExceeded},
		{"type first, detail cut", cut(`{"type":"` + ProblemReducedCapacity + `","detail":"` + long + `"}`), ProblemReducedCapacity},
		{"type after the cut", cut(`{"detail":"` + long + `","type":"` + ProblemQuotaExceeded + `"}`), ""},
		{"type after other members", `{"title":"t","status":429,"violated-policies":["a","b"],"type":"` + ProblemAbnormalUsage + `"}`, ProblemAbnormalUsage},
		{"nested type only", `{"error":{"type":"` + ProblemQuotaExceeded + `"}}`, ""},
		{"not a string", `{"type":429}`, ""},
		{"too long", `{"type":"` + strings.Repeat("t", maxProblemType+1) + `"}`, ""},
		{"not an object", `["` + ProblemQuotaExceeded + `"]`, ""},
		{"not JSON", `quota exceeded`, ""},
		{"empty", ``, ""},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ProblemType([]byte(c.body)), c.name)
	}
}

// TestRefusedStatuses: 429 and 503 refuse whatever the body; another
// error status only with one of the IETF problem types; no success does.
func TestRefusedStatuses(t *testing.T) {
	for _, p := range []string{ProblemQuotaExceeded, ProblemReducedCapacity, ProblemAbnormalUsage} {
		assert.True(t, Refused(403, p), p)
		assert.True(t, Refused(400, p), p)
		assert.False(t, Refused(200, p), p)
	}
	assert.True(t, Refused(429, ""))
	assert.True(t, Refused(503, ""))
	assert.False(t, Refused(403, "about:blank"))
	assert.False(t, Refused(500, ""))
}
