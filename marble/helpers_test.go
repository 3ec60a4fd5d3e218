package marble

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// fakeT records what the scheduler reports, so tests can check failures
// of the harness itself.
type fakeT struct {
	mu   sync.Mutex
	msgs []string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, "log: "+fmt.Sprintf(format, args...))
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, "fatal: "+fmt.Sprintf(format, args...))
}

// runFake runs fn like Run, and returns what it reported instead of
// failing t.
func runFake(t *testing.T, fn func(*Scheduler), opts ...RunOption) []string {
	t.Helper()
	f := &fakeT{}
	run(t, f, fn, opts)
	return f.msgs
}

var runtimeCaller = runtime.Caller

// regexpQuote quotes s for a regexp, with LINE standing for any line number.
func regexpQuote(s string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(s), "LINE", `\d+`)
}
