package marble

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportChild fails on purpose; TestFailuresPointAtTheUsersLine runs
// it in a child process and reads what go test prints.
func TestReportChild(t *testing.T) {
	if os.Getenv("MARBLE_REPORT_CHILD") != "1" {
		t.Skip("run by TestFailuresPointAtTheUsersLine")
	}
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b|", nil)
		s.ExpectObservable(src).ToBe("a--b|", nil) // line: late
		s.ExpectObservable(src).ToBe("a)", nil)    // line: malformed
		e := s.ExpectObservable(src)
		e.ToBe("a-b|", nil)
		e.ToBe("a-b|", nil)               // line: twice
		s.ExpectSubscriptions(src).ToBe() // line: subscriptions
	})
}

// A failure is printed once, at the user's line, whether it is found while
// fn runs (a malformed marble) or after Run has moved time (a timeline
// that differs), and never at a line of the harness.
func TestFailuresPointAtTheUsersLine(t *testing.T) {
	out := runChild(t, "TestReportChild", "MARBLE_REPORT_CHILD")
	lines := markedLines(t, "report_test.go")
	for mark, want := range map[string]string{
		"late":          "marble: timelines differ at frame 2\n          want: a--b|\n          got : a-b|",
		"malformed":     `marble: "a)": unbalanced ) without a group to close at column 2`,
		"twice":         "marble: ToBe called twice on one ExpectObservable",
		"subscriptions": "marble: subscriptions differ\n          want: (no subscription)",
	} {
		loc := fmt.Sprintf("    report_test.go:%d: ", lines[mark])
		assert.Equal(t, 1, strings.Count(out, loc+want), "%s: want %q once in\n%s", mark, loc+want, out)
		assert.Equal(t, 1, strings.Count(out, loc), "%s: %q printed more than once", mark, loc)
	}
	for _, f := range []string{"scheduler.go", "expect.go", "report.go", "source.go", "diff.go"} {
		assert.NotContains(t, out, " "+f+":", "a failure located in the harness")
	}
}

// runChild runs test in a child process of the test binary, with env set
// to 1, and returns its output; the child must fail.
func runChild(t *testing.T, test, env string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child test must fail:\n%s", out)
	return string(out)
}

// markedLines returns the line number of each "// line: name" comment of
// file.
func markedLines(t *testing.T, file string) map[string]int {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	lines := make(map[string]int)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if _, mark, ok := strings.Cut(sc.Text(), "// line: "); ok {
			lines[mark] = n
		}
	}
	require.NoError(t, sc.Err())
	return lines
}
