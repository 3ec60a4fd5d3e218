package marble_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle/marble"
)

// test stands for a Test function: Example functions get no *testing.T,
// and marble.Run needs one (testing/synctest does), so test runs fn as a
// one-test suite and prints whether it passed.
func test(fn func(t *testing.T)) {
	// testing.RunTests obeys go test's flags: keep -v from printing the
	// inner test's "=== RUN" lines into the example's output, and -count
	// from running it count times.
	defer setFlag("test.v", "false")()
	defer setFlag("test.count", "1")()
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "Example", F: fn}})
	fmt.Println("passed:", ok)
}

// setFlag sets a flag of the testing package and returns a func that
// restores it.
func setFlag(name, value string) func() {
	f := flag.Lookup(name)
	if f == nil {
		return func() {}
	}
	old := f.Value.String()
	_ = f.Value.Set(value)
	return func() { _ = f.Value.Set(old) }
}

func ExampleRun() {
	test(func(t *testing.T) {
		marble.Run(t, func(s *marble.Scheduler) {
			// A pipeline that takes 3 frames per item, on the real time
			// package: inside Run that is virtual time.
			src := s.Cold("a-b|", nil)
			out := src.Map(func(_ context.Context, v any) (any, error) {
				time.Sleep(3 * s.Frame())
				return strings.ToUpper(v.(string)), nil
			})
			s.ExpectObservable(out).ToBe("---A--(B|)", map[string]any{"A": "A", "B": "B"})
			s.ExpectSubscriptions(src).ToBe("^--!")
		})
	})
	// Output: passed: true
}

func ExampleScheduler_Hot() {
	test(func(t *testing.T) {
		marble.Run(t, func(s *marble.Scheduler) {
			values := map[string]any{"a": 1, "b": 2, "c": 3}
			// Frame 0 is the ^; a happened before the test.
			src := s.Hot("a-^-b-c-|", values)
			even := src.Filter(func(v any) bool { return v.(int)%2 == 0 })
			// Subscribe at frame 1, unsubscribe at frame 4: c at frame 4
			// is not seen.
			s.ExpectObservable(even, "-^--!").ToBe("--b-", values)
			s.ExpectSubscriptions(src).ToBe("-^--!")
		})
	})
	// Output: passed: true
}

func ExampleScheduler_Cold_error() {
	test(func(t *testing.T) {
		marble.Run(t, func(s *marble.Scheduler) {
			errDown := fmt.Errorf("service down")
			src := s.Cold("a-b-#", nil, marble.WithError(errDown))
			// Retry resubscribes to the cold source, which plays again
			// from the start.
			s.ExpectObservable(src.Retry(1, func(error) bool { return true })).
				ToBe("a-b-a-b-#", nil, marble.WithError(errDown))
			s.ExpectSubscriptions(src).ToBe("^---!", "----^---!")
		})
	})
	// Output: passed: true
}

func ExampleRun_frame() {
	test(func(t *testing.T) {
		marble.Run(t, func(s *marble.Scheduler) {
			src := s.Cold("a 1s b|", nil)
			out := src.Debounce(rxgo.WithDuration(300 * time.Millisecond))
			// With 100ms frames, "1s " is ten frames, so b comes at frame
			// 11. rxgo's Debounce of 300ms lets a through three frames
			// after it came; b is dropped by the completion at frame 12.
			s.ExpectObservable(out).ToBe("---a--------|", nil)
		}, marble.WithFrame(100*time.Millisecond))
	})
	// Output: passed: true
}

func ExampleParse() {
	tl, err := marble.Parse("-a-(b|) 10ms ", time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range tl.Events {
		if e.Kind == marble.Next {
			fmt.Printf("frame %d: %s %c\n", e.Frame, e.Kind, e.Symbol)
		} else {
			fmt.Printf("frame %d: %s\n", e.Frame, e.Kind)
		}
	}
	fmt.Println("end:", tl.End)

	_, err = marble.Parse("a-(b-c|", time.Millisecond)
	fmt.Println(err)
	// Output:
	// frame 1: next a
	// frame 3: next b
	// frame 3: complete
	// end: 17
	// marble: "a-(b-c|": unclosed group at column 3
}

func ExampleRender() {
	tl, _ := marble.Parse("a 2s (b|)", time.Millisecond)
	s, err := marble.Render(tl, time.Millisecond)
	fmt.Println(s, err)
	tl, _ = marble.Parse("  a  9ms  b", time.Millisecond)
	s, err = marble.Render(tl, time.Millisecond)
	fmt.Println(s, err)
	// Output:
	// a 2s (b|) <nil>
	// a---------b <nil>
}
