package marble

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Channel sources and expectations: ColdChan, HotChan, their Result
// variants and ExpectChan, end to end, with their values and mistakes;
// chan_send_test.go tests how a source sends to a busy receiver,
// chan_expect_test.go how ExpectChan reads. The channel code under test is
// written as a user would write it: goroutines, time.Sleep, timers, all on
// the bubble's virtual time.

// relay copies in to a new channel, taking d per value, and closes its
// output when in closes or ctx ends.
func relay[T any](ctx context.Context, in <-chan T, d time.Duration) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		for v := range in {
			time.Sleep(d)
			select {
			case out <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func TestChanColdToExpect(t *testing.T) {
	tests := []struct {
		name, source, want string
	}{
		{"values and close", "a-b-c|", "a-b-c|"},
		{"group", "-(ab)-c|", "-(ab)-c|"},
		{"group with close", "a(b|)", "a(b|)"},
		{"time progression", "a 9ms b|", "a---------b|"},
		{"fractional time progression", "a 1.5ms b|", "a 1.5ms b|"},
		{"fractional, written otherwise", "a 1.5ms b|", "a 0.5ms -b|"},
		{"never closed", "a-b", "a-b"},
		{"empty", "", ""},
		{"closed at once", "|", "|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Run(t, func(s *Scheduler) {
				ExpectChan(s, ColdChan[string](s, tt.source, nil)).ToBe(tt.want, nil)
			})
		})
	}
}

func TestChanValues(t *testing.T) {
	Run(t, func(s *Scheduler) {
		values := map[string]int{"a": 1, "b": 2, "🙈": 3}
		ExpectChan(s, ColdChan(s, "a-b|", values)).ToBe("a-b|", values)
		// A struct, compared with reflect.DeepEqual.
		type point struct{ X, Y int }
		pts := map[string]point{"p": {1, 2}, "q": {3, 4}}
		ExpectChan(s, ColdChan(s, "p--q|", pts)).ToBe("p--q|", pts)
		// Any holds the letters as strings with a nil map.
		ExpectChan(s, ColdChan[any](s, "xy|", nil)).ToBe("xy|", nil)
		// A named string type: each letter converted to it.
		type key string
		ExpectChan(s, ColdChan[key](s, "k-l|", nil)).ToBe("k-l|", map[string]key{"k": "k", "l": "l"})
		ExpectChan(s, ColdChan[key](s, "k-l|", nil)).ToBe("k-l|", nil)
		// Without values, a nil map is fine for any T.
		ExpectChan(s, ColdChan[int](s, "--|", nil)).ToBe("--|", nil)
	})
}

func TestChanBadValues(t *testing.T) {
	tests := []struct {
		name string
		fn   func(s *Scheduler)
		want string
	}{
		{"nil map for int", func(s *Scheduler) {
			ColdChan[int](s, "a-b|", nil)
		}, `fatal: marble: ColdChan: a nil values map stands for each value symbol as a string, and int is not a string type: pass a map[string]int`},
		{"missing value", func(s *Scheduler) {
			ColdChan(s, "a-b|", map[string]int{"a": 1})
		}, `fatal: marble: "a-b|": value "b" missing from the values map at column 3`},
		{"hot nil map for a struct", func(s *Scheduler) {
			HotChan[struct{}](s, "^a", nil)
		}, `fatal: marble: HotChan: a nil values map stands for each value symbol as a string, and struct {} is not a string type: pass a map[string]struct {}`},
		{"# on a plain channel", func(s *Scheduler) {
			ColdChan[string](s, "a-#", nil)
		}, `fatal: marble: "a-#": # on a plain channel (a <-chan string cannot carry an error: use ColdResultChan, whose elements are Result[string]) at column 3`},
		{"# on a plain hot channel", func(s *Scheduler) {
			HotChan[int](s, "#", nil)
		}, `fatal: marble: "#": # on a plain channel (a <-chan int cannot carry an error: use HotResultChan, whose elements are Result[int]) at column 1`},
		{"^ in a cold channel", func(s *Scheduler) {
			ColdChan[string](s, "-^a", nil)
		}, `fatal: marble: "-^a": ^ in a cold marble (a cold channel starts when it is made) at column 2`},
		{"! in a hot channel", func(s *Scheduler) {
			HotChan[string](s, "^a!", nil)
		}, `fatal: marble: "^a!": ! in a hot marble (only a subscription marble unsubscribes) at column 3`},
		{"negative buffer", func(s *Scheduler) {
			ColdChan[string](s, "a", nil, WithBuffer(-1))
		}, `fatal: marble: ColdChan: WithBuffer(-1): a buffer cannot be negative`},
		{"nil option", func(s *Scheduler) {
			HotChan[string](s, "a", nil, nil)
		}, `fatal: marble: nil MarbleOption`},
		{"WithError(nil)", func(s *Scheduler) {
			ColdResultChan[string](s, "#", nil, WithError(nil))
		}, `fatal: marble: WithError(nil): # needs a non-nil error`},
		{"WithBuffer on Cold", func(s *Scheduler) {
			s.Cold("a", nil, WithBuffer(1))
		}, `fatal: marble: WithBuffer(1) applies to channel sources (ColdChan, HotChan and their Result variants) only`},
		{"nil channel", func(s *Scheduler) {
			ExpectChan[int](s, nil).ToBe("", nil)
		}, `marble: ExpectChan(nil): a nil channel never delivers anything`},
		{"ToBe nil map for int", func(s *Scheduler) {
			ExpectChan(s, ColdChan(s, "a|", map[string]int{"a": 1})).ToBe("a|", nil)
		}, `marble: ExpectChan: a nil values map stands for each value symbol as a string, and int is not a string type: pass a map[string]int`},
		{"ToBe missing value", func(s *Scheduler) {
			ExpectChan(s, ColdChan(s, "a|", map[string]int{"a": 1})).ToBe("b|", map[string]int{"a": 1})
		}, `marble: "b|": value "b" missing from the values map at column 1`},
		{"# expected of a plain channel", func(s *Scheduler) {
			ExpectChan(s, ColdChan[string](s, "a|", nil)).ToBe("a#", nil)
		}, `marble: "a#": # expected of a plain channel (a <-chan string cannot carry an error: use ExpectResultChan over a <-chan Result[string]) at column 2`},
		{"ToBe twice", func(s *Scheduler) {
			e := ExpectChan(s, ColdChan[string](s, "a|", nil))
			e.ToBe("a|", nil)
			e.ToBe("a|", nil)
		}, `marble: ToBe called twice on one ExpectChan`},
		{"no ToBe", func(s *Scheduler) {
			ExpectChan(s, ColdChan[string](s, "a|", nil))
		}, `chan_test.go:LINE: marble: ExpectChan without ToBe`},
		{"! in an expected marble", func(s *Scheduler) {
			ExpectChan(s, ColdChan[string](s, "a|", nil)).ToBe("a!", nil)
		}, `marble: "a!": ! in an expected marble (unsubscribe with ExpectChan's subscription marble) at column 2`},
		{"bad subscription marble", func(s *Scheduler) {
			ExpectChan(s, ColdChan[string](s, "a|", nil), "-a-").ToBe("a|", nil)
		}, `marble: "-a-": notification in a subscription marble (it holds only - ^ ! and spaces) at column 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertFirstReport(t, tt.fn, tt.want)
		})
	}
}

func TestChanResults(t *testing.T) {
	errDown := errors.New("down")
	Run(t, func(s *Scheduler) {
		values := map[string]int{"a": 1, "b": 2}
		// # sends the error, then closes the channel.
		src := ColdResultChan(s, "a-b-#", values, WithError(errDown))
		ExpectResultChan(s, src).ToBe("a-b-#", values, WithError(errDown))
		// A close without an error is the completion.
		ExpectResultChan(s, HotResultChan(s, "^a-|", values)).ToBe("-a-|", values)
	})
	// Read by hand: the elements are Results.
	var got []Result[string]
	Run(t, func(s *Scheduler) {
		src := ColdResultChan[string](s, "a#", nil, WithError(errDown))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for r := range src {
				got = append(got, r)
			}
		}()
		ExpectChan(s, done).ToBe("-|", nil)
	})
	assert.Equal(t, []Result[string]{{Value: "a"}, {Err: errDown}}, got)
	msgs := runFake(t, func(s *Scheduler) {
		ExpectResultChan(s, ColdResultChan[string](s, "a#", nil)).ToBe("a#", nil, WithError(errDown))
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "only in want:\n    frame 1: # = down")
	assert.Contains(t, msgs[0], "only in got:\n    frame 1: # = marble: error")
}

// A cold channel plays from the instant it is made: a consumer that
// reconnects after an error gets a fresh one, from then.
func TestChanColdMadeLater(t *testing.T) {
	Run(t, func(s *Scheduler) {
		connects := 0
		connect := func() <-chan Result[string] {
			connects++
			return ColdResultChan[string](s, "a-b#", nil)
		}
		out := make(chan string)
		go func() {
			defer close(out)
			for range 2 {
				for r := range connect() {
					if r.Err != nil {
						break
					}
					out <- r.Value
				}
			}
		}()
		ExpectChan(s, out).ToBe("a-ba-b|", nil)
	})
}
