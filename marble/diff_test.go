package marble

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wrong expectation fails with both timelines drawn one above the other,
// a caret under the first differing frame, and the differing events.
func TestWrongExpectationFailsWithDiff(t *testing.T) {
	var line int
	msgs := runFake(t, func(s *Scheduler) {
		src := s.Cold("abcde-----fg|", nil)
		line = lineNow() + 1
		s.ExpectObservable(src).ToBe("abcde----fg|", nil)
	})
	require.Len(t, msgs, 1)
	want := fmt.Sprintf(`diff_test.go:%d: marble: timelines differ at frame 9
  want: abcde----fg|
  got : abcde-----fg|
                 ^
  only in want:
    frame 9: f = "f"
    frame 10: g = "g"
    frame 11: |
  only in got:
    frame 10: f = "f"
    frame 11: g = "g"
    frame 12: |`, line)
	assert.Equal(t, want, msgs[0])
}

func lineNow() int {
	_, _, line, _ := runtimeCaller(1)
	return line
}

func TestDiffValues(t *testing.T) {
	values := map[string]any{"a": 1, "b": 2}
	msgs := runFake(t, func(s *Scheduler) {
		src := s.Cold("a-b-c|", map[string]any{"a": 1, "b": 2, "c": 3})
		s.ExpectObservable(src).ToBe("a-a-b|", values)
	})
	require.Len(t, msgs, 1)
	// 3 has no letter in the expected values map: drawn as ?.
	assert.Contains(t, msgs[0], `timelines differ at frame 2
  want: a-a-b|
  got : a-b-?|
          ^
  only in want:
    frame 2: a = 1
    frame 4: b = 2
  only in got:
    frame 2: b = 2
    frame 4: ? = 3`)
}

func TestDiffMissingCompletion(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(s.Cold("a-b", nil)).ToBe("a-b|", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "timelines differ at frame 3\n  want: a-b|\n  got : a-b\n           ^\n  only in want:\n    frame 3: |")
}

func TestDiffBetweenFrames(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		out := s.Cold("a|", nil).Map(func(_ context.Context, v any) (any, error) {
			time.Sleep(2500 * time.Microsecond)
			return v, nil
		})
		s.ExpectObservable(out).ToBe("--(a|)", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "only in got:\n    2.5ms (between frames 2 and 3): a = \"a\"\n    2.5ms (between frames 2 and 3): |")
	assert.Contains(t, msgs[0], "got next between frames 2 and 3 (2.5ms after the start; a frame is 1ms): make every delay of the pipeline a whole number of frames (WithFrame)")
}

func TestDiffDenseGot(t *testing.T) {
	// Two values at frame 0 and one at frame 1 have no marble (the group
	// takes four frames); the drawing says so and the list is exact.
	msgs := runFake(t, func(s *Scheduler) {
		x := s.Cold("a", nil)
		y := s.Cold("b-c", nil)
		s.ExpectObservable(rxgo.Merge([]rxgo.Observable{x, y})).ToBe("a-c", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "  got : (ab)c\n")
	assert.Contains(t, msgs[0], "(got has events closer together than its groups are wide, so the drawing shows some late; the times below are exact)")
	assert.Contains(t, msgs[0], "only in got:\n    frame 0: b = \"b\"")
}

func TestDiffLongTimelineIsWindowed(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(s.Cold("1s a 1s |", nil)).ToBe("1s b 1s |", nil)
	})
	require.Len(t, msgs, 1)
	lines := strings.Split(msgs[0], "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	assert.Equal(t, "  want: …"+strings.Repeat("-", 30)+"b"+strings.Repeat("-", 69)+"…", lines[1])
	assert.Equal(t, "  got : …"+strings.Repeat("-", 30)+"a"+strings.Repeat("-", 69)+"…", lines[2])
	assert.Equal(t, strings.Repeat(" ", 9+30)+"^", lines[3])
}

func TestDiffSubscriptions(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		src := s.Cold("a-b-c|", nil)
		s.ExpectObservable(src, "^-!").ToBe("a-", nil)
		s.ExpectObservable(src, "--^").ToBe("--a-b-c|", nil)
		s.ExpectSubscriptions(src).ToBe("^--!", "--^----!")
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], `subscriptions differ
  want: ^--!
        --^----!
  got : ^-!
        --^----!`)
}

func TestSetupErrors(t *testing.T) {
	tests := []struct {
		name string
		fn   func(s *Scheduler)
		want string
	}{
		{"bad cold marble", func(s *Scheduler) { s.Cold("a-(b-c|", nil) },
			`fatal: marble: "a-(b-c|": unclosed group at column 3`},
		{"caret in cold", func(s *Scheduler) { s.Cold("-^-a", nil) },
			`fatal: marble: "-^-a": ^ in a cold marble (only a hot source has a subscription point; a cold one starts when subscribed) at column 2`},
		{"bang in hot", func(s *Scheduler) { s.Hot("-^-a!", nil) },
			`fatal: marble: "-^-a!": ! in a hot marble (only a subscription marble unsubscribes) at column 5`},
		{"missing value", func(s *Scheduler) { s.Cold("a-b", map[string]any{"a": 1}) },
			`fatal: marble: "a-b": value "b" missing from the values map at column 3`},
		{"nil error option", func(s *Scheduler) { s.Cold("#", nil, WithError(nil)) },
			`fatal: marble: WithError(nil): # needs a non-nil error`},
		{"nil marble option", func(s *Scheduler) { s.Hot("a", nil, nil) },
			`fatal: marble: nil MarbleOption`},
		{"bad expected marble", func(s *Scheduler) { s.ExpectObservable(s.Cold("a", nil)).ToBe("a)", nil) },
			`marble: "a)": unbalanced ) without a group to close at column 2`},
		{"bang in expected", func(s *Scheduler) { s.ExpectObservable(s.Cold("a", nil)).ToBe("a!", nil) },
			`marble: "a!": ! in an expected marble (unsubscribe with ExpectObservable's subscription marble) at column 2`},
		{"event before caret in expected", func(s *Scheduler) { s.ExpectObservable(s.Cold("a", nil)).ToBe("a^", nil) },
			`marble: "a^": notification before ^ (frame 0) in an expected marble at column 1`},
		{"missing expected value", func(s *Scheduler) { s.ExpectObservable(s.Cold("a", nil)).ToBe("-a", map[string]any{}) },
			`marble: "-a": value "a" missing from the values map at column 2`},
		{"value in subscription marble", func(s *Scheduler) { s.ExpectObservable(s.Cold("a", nil), "^-a").ToBe("a", nil) },
			`marble: "^-a": notification in a subscription marble (it holds only - ^ ! and spaces) at column 3`},
		{"two subscription marbles", func(s *Scheduler) { s.ExpectObservable(s.Cold("a", nil), "^", "^").ToBe("a", nil) },
			`marble: ExpectObservable takes at most one subscription marble, got 2`},
		{"nil observable", func(s *Scheduler) { s.ExpectObservable(nil).ToBe("a", nil) },
			`marble: ExpectObservable(nil)`},
		{"no ToBe", func(s *Scheduler) { s.ExpectObservable(s.Cold("a|", nil)) },
			`diff_test.go:LINE: marble: ExpectObservable without ToBe`},
		{"ToBe twice", func(s *Scheduler) { e := s.ExpectObservable(s.Cold("a|", nil)); e.ToBe("a|", nil); e.ToBe("a|", nil) },
			`marble: ToBe called twice on one ExpectObservable`},
		{"foreign source", func(s *Scheduler) { s.ExpectSubscriptions(rxgo.Just(1)()).ToBe("^") },
			`marble: ExpectSubscriptions of an observable that is not a Cold or Hot source of this Scheduler`},
		{"bad subscription expectation", func(s *Scheduler) { s.ExpectSubscriptions(s.Cold("a", nil)).ToBe("^-|") },
			`marble: "^-|": notification in a subscription marble (it holds only - ^ ! and spaces) at column 3`},
		{"no subscriptions ToBe", func(s *Scheduler) { s.ExpectSubscriptions(s.Cold("a", nil)) },
			`diff_test.go:LINE: marble: ExpectSubscriptions without ToBe`},
		{"time moved in fn", func(s *Scheduler) { time.Sleep(3 * time.Millisecond) },
			`helpers_test.go:LINE: marble: virtual time moved by 3ms while fn ran; fn must only set up sources and expectations (Run moves time once fn returns)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertFirstReport(t, tt.fn, tt.want)
		})
	}
}

func TestRunOptionErrors(t *testing.T) {
	fn := func(s *Scheduler) { t.Error("fn must not run") }
	assert.Equal(t, []string{"fatal: marble: WithFrame(0s): the frame must be positive"}, runFake(t, fn, WithFrame(0)))
	assert.Equal(t, []string{"fatal: marble: WithIdle(0): need at least one frame"}, runFake(t, fn, WithIdle(0)))
	assert.Equal(t, []string{"fatal: marble: nil RunOption"}, runFake(t, fn, nil))
}

func TestSourceCreatedDuringFlush(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		out := s.Cold("a|", nil).Map(func(_ context.Context, v any) (any, error) {
			s.Cold("b", nil) // too late: time is running
			return v, nil
		})
		s.ExpectObservable(out).ToBe("a|", nil)
	})
	require.Len(t, msgs, 1)
	assert.Regexp(t, `^marble: source created after fn returned; create sources inside fn$`, msgs[0])
}
