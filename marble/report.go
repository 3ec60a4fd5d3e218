package marble

import (
	"fmt"
	"path/filepath"
	"runtime"
)

// reporter is the part of testing.TB the scheduler reports through; tests
// of the harness pass a fake to check the failure output.
type reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// caller names the file:line of the test code that called into the
// scheduler, skip frames up, for failure messages: failures are reported
// after fn has returned, when the line is no longer on the stack.
func caller(skip int) string {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}
