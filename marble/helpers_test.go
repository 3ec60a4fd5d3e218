package marble

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// Fail records that the test failed without a message of its own: the
// scheduler wrote it to Output.
func (f *fakeT) Fail() {}

// Output returns a writer that records each write as one message, with
// the indentation of continuation lines (as the testing package prints
// them) taken out, so that tests compare the message itself.
func (f *fakeT) Output() io.Writer { return fakeOutput{f} }

type fakeOutput struct{ f *fakeT }

func (o fakeOutput) Write(p []byte) (int, error) {
	o.f.mu.Lock()
	defer o.f.mu.Unlock()
	msg := strings.ReplaceAll(strings.TrimSuffix(string(p), "\n"), "\n    ", "\n")
	o.f.msgs = append(o.f.msgs, msg)
	return len(p), nil
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

// assertFirstReport runs fn like Run and checks that the first thing it
// reported matches want, with LINE standing for any line number.
func assertFirstReport(t *testing.T, fn func(*Scheduler), want string) {
	t.Helper()
	msgs := runFake(t, fn)
	require.NotEmpty(t, msgs)
	assert.Regexp(t, "^"+regexpQuote(want)+"$", msgs[0])
}

// regexpQuote quotes s for a regexp, with LINE standing for any line number.
func regexpQuote(s string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(s), "LINE", `\d+`)
}
