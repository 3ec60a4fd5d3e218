package marble

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
)

// reporter is the part of testing.TB the scheduler reports through; tests
// of the harness pass a fake to check the failure output.
type reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fail()
	Output() io.Writer
}

// Where failures are reported. A mistake found while fn runs (a malformed
// marble, ToBe twice) is reported with Errorf or Fatalf through functions
// marked Helper, so the testing package names the user's line, as it does
// for testify. A failed expectation is only found once Run has moved time,
// after fn has returned, when the user's line is no longer on any stack:
// for those, ToBe records the line (location) and the scheduler writes the
// failure to the test's output in the testing package's own format,
// "file.go:12: message" with continuation lines indented, then marks the
// test failed (reportAt). Either way the line is printed once, and it is
// the user's.

// harnessPrefix is the prefix of the function names of this package.
const harnessPrefix = "github.com/rxthrottle/rxthrottle/marble."

// location returns "file.go:line" of the innermost caller outside this
// package's non-test files: the user's call of ToBe, ExpectObservable,
// Cold... however many of the package's own functions (generic ones
// included) lie between. A user helper that calls ToBe is named itself:
// the testing package keeps the functions marked Helper to itself.
func location() string {
	var pcs [64]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, harnessPrefix) || strings.HasSuffix(f.File, "_test.go") {
			file := filepath.Base(f.File)
			if fullPath() {
				file = f.File
			}
			return fmt.Sprintf("%s:%d", file, f.Line)
		}
		if !more {
			return "?"
		}
	}
}

// fullPath reports whether go test runs with -test.fullpath, which prints
// whole file paths in failures.
func fullPath() bool {
	f := flag.Lookup("test.fullpath")
	return f != nil && f.Value.String() == "true"
}

// reportAt fails the test with a message located at loc (see location).
func (s *Scheduler) reportAt(loc, format string, args ...any) {
	s.logAt(loc, format, args...)
	s.rep.Fail()
}

// logAt logs a message located at loc, formatted as the testing package
// formats t.Log: "loc: first line", the other lines indented four spaces
// more.
func (s *Scheduler) logAt(loc, format string, args ...any) {
	msg := strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")
	msg = strings.ReplaceAll(msg, "\n", "\n    ")
	fmt.Fprintf(s.rep.Output(), "%s: %s\n", loc, msg)
}
