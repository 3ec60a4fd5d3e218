package marble

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestChanReportChild fails on purpose; TestChanFailuresPointAtTheUsersLine
// runs it in a child process and reads what go test prints.
func TestChanReportChild(t *testing.T) {
	if os.Getenv("MARBLE_CHAN_REPORT_CHILD") != "1" {
		t.Skip("run by TestChanFailuresPointAtTheUsersLine")
	}
	// One Run each: a malformed source stops its Run (Fatalf).
	t.Run("late", func(t *testing.T) {
		Run(t, func(s *Scheduler) {
			ExpectChan(s, ColdChan[string](s, "a-b|", nil)).ToBe("a--b|", nil) // line: late
		})
	})
	t.Run("plain", func(t *testing.T) {
		Run(t, func(s *Scheduler) {
			ExpectChan(s, ColdChan[string](s, "a-#", nil)).ToBe("a-b|", nil) // line: plain #
		})
	})
	t.Run("missing", func(t *testing.T) {
		Run(t, func(s *Scheduler) {
			ExpectChan(s, ColdChan(s, "ab", map[string]int{"a": 1})).ToBe("", nil) // line: missing
		})
	})
}

// ExpectChan's failures, and ColdChan's, are printed once, at the user's
// line, as ExpectObservable's are.
func TestChanFailuresPointAtTheUsersLine(t *testing.T) {
	out := runChild(t, "TestChanReportChild", "MARBLE_CHAN_REPORT_CHILD")
	lines := markedLines(t, "chan_report_test.go")
	for mark, want := range map[string]string{
		"late":    "marble: timelines differ at frame 2\n              want: a--b|\n              got : a-b|",
		"plain #": `marble: "a-#": # on a plain channel (a <-chan string cannot carry an error: use ColdResultChan, whose elements are Result[string]) at column 3`,
		"missing": `marble: "ab": value "b" missing from the values map at column 2`,
	} {
		loc := fmt.Sprintf("        chan_report_test.go:%d: ", lines[mark])
		assert.Equal(t, 1, strings.Count(out, loc+want), "%s: want %q once in\n%s", mark, loc+want, out)
	}
	for _, f := range []string{"chan.go", "chan_source.go", "chan_send.go", "chan_values.go", "chan_expect.go", "scheduler.go", "expect.go"} {
		assert.NotContains(t, out, " "+f+":", "a failure located in the harness")
	}
}

// TestChanLeakChild leaks a goroutine on purpose: ExpectChan stops reading
// at its !, and the sender, which watches no context, stays blocked.
func TestChanLeakChild(t *testing.T) {
	if os.Getenv("MARBLE_CHAN_LEAK_CHILD") != "1" {
		t.Skip("run by TestChanLeakedSenderFailsTheTest")
	}
	Run(t, func(s *Scheduler) {
		ch := make(chan string)
		go leakySender(ch, s.Frame())
		ExpectChan(s, ch, "^-!").ToBe("abc", nil)
		// Keep the run going past frame 3.
		ExpectChan(s, ColdChan[string](s, "-----|", nil)).ToBe("-----|", nil)
	})
}

func leakySender(ch chan<- string, frame time.Duration) {
	for _, v := range []string{"a", "b", "c", "d"} {
		ch <- v // d, at frame 3, finds no reader: blocked for good
		time.Sleep(frame)
	}
	close(ch)
}

// A goroutine left blocked on a channel nobody reads fails the test:
// synctest reports it when Run's bubble ends, with its stack.
func TestChanLeakedSenderFailsTheTest(t *testing.T) {
	out := runChild(t, "TestChanLeakChild", "MARBLE_CHAN_LEAK_CHILD")
	assert.Contains(t, out, "deadlock: main bubble goroutine has exited but blocked goroutines remain")
	assert.Contains(t, out, "marble.leakySender")
	assert.Contains(t, out, "chan send (durable)")
}
