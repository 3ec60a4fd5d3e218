package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// Missing returns why the tests that need redis-server will skip (it is
// not on PATH), or "" when they will run. With RXTHROTTLE_REQUIRE_REDIS=1
// they fail instead, and Missing says so.
func Missing() string {
	if _, err := exec.LookPath("redis-server"); err == nil {
		return ""
	}
	if os.Getenv(RequireEnv) == "1" {
		return fmt.Sprintf("redis-server not found on PATH and %s=1: the Redis tests FAIL; %s", RequireEnv, SkipMessage)
	}
	return "redis-server not found on PATH: the Redis tests are SKIPPED; " + SkipMessage
}

// Announce prints line where a plain `go test ./...` shows it. go test
// hides the output of a package that passes unless -v is given, so on
// Linux the line goes to the standard error of the process that started
// the test binary (the go command), read through /proc; elsewhere, or if
// that fails, to the test's own standard error (seen with -v). A cached
// result does not run the binary, so it prints nothing.
func Announce(line string) {
	if runtime.GOOS == "linux" {
		f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", os.Getppid()), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			_ = f.Close()
			if err == nil {
				return
			}
		}
	}
	fmt.Fprintln(os.Stderr, line)
}
