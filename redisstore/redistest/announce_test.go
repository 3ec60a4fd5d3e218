package redistest

import (
	"strings"
	"testing"
)

// TestMissing: without redis-server on PATH, Missing says the Redis tests
// skip (or fail, under RXTHROTTLE_REQUIRE_REDIS=1), for TestMain to print.
func TestMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(RequireEnv, "")
	if got := Missing(); !strings.Contains(got, "the Redis tests are SKIPPED") || !strings.Contains(got, SkipMessage) {
		t.Fatalf("Missing() = %q", got)
	}
	t.Setenv(RequireEnv, "1")
	if got := Missing(); !strings.Contains(got, "the Redis tests FAIL") {
		t.Fatalf("Missing() with %s=1 = %q", RequireEnv, got)
	}
}
