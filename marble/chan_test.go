package marble

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Channel sources and expectations: ColdChan, HotChan, their Result
// variants and ExpectChan. The channel code under test is written here as
// a user would write it: goroutines, time.Sleep, timers, all on the
// bubble's virtual time.

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

// A receiver that takes 3 frames per value: the cold channel's values wait
// for it, in order, and none is lost; the close comes after the last.
func TestChanColdWaitsForItsReceiver(t *testing.T) {
	for _, buffer := range []int{0, 1, 10} {
		Run(t, func(s *Scheduler) {
			src := ColdChan[string](s, "(abc)d|", nil, WithBuffer(buffer))
			out := relay(s.Context(), src, 3*s.Frame())
			ExpectChan(s, out).ToBe("---a--b--c--(d|)", nil)
		})
	}
}

// A hot channel sends on the clock: a value that finds its receiver busy
// (and no room in the buffer) is dropped, and the log says so.
func TestChanHotDropsWhatNobodyReceives(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		// b at 0 is taken at once and goes out at 3 (3 frames per
		// value); c at 2 comes while the relay sleeps: dropped; d at 4
		// is taken, out at 7; e at 6 is dropped.
		src := HotChan[string](s, "b-c-d-e-|", nil)
		ExpectChan(s, relay(s.Context(), src, 3*s.Frame())).ToBe("---b---d|", nil)
	})
	require.Len(t, msgs, 2)
	assert.Regexp(t, regexpQuote("chan_test.go:LINE: marble: HotChan dropped c at frame 2: no receiver was ready"), msgs[0])
	assert.Regexp(t, regexpQuote("chan_test.go:LINE: marble: HotChan dropped e at frame 6: no receiver was ready"), msgs[1])
	// With a buffer, c and e wait in it; the | closes the channel at 8,
	// and e, still in the buffer, is received after it.
	Run(t, func(s *Scheduler) {
		src := HotChan[string](s, "b-c-d-e-|", nil, WithBuffer(1))
		ExpectChan(s, relay(s.Context(), src, 3*s.Frame())).ToBe("---b--c--d--(e|)", nil)
	})
	// ^ is frame 0; values before it are not sent.
	Run(t, func(s *Scheduler) {
		src := HotChan[string](s, "a-^b-c|", nil)
		ExpectChan(s, src).ToBe("-b-c|", nil)
	})
	// A | before ^: closed from the start.
	Run(t, func(s *Scheduler) {
		ExpectChan(s, HotChan[string](s, "a|-^--", nil)).ToBe("|", nil)
	})
	msgs = runFake(t, func(s *Scheduler) {
		src := HotChan[string](s, "-a", nil, WithBuffer(1))
		ExpectChan(s, src, "---^").ToBe("---a", nil)
	})
	assert.Empty(t, msgs, "a buffered value waits for the reader")
}

// A group's values reach a receiver one by one, each fully processed
// before the next (here: forwarded on another channel), on a hot channel
// too, where a receiver still busy with the one before would drop it.
func TestChanGroupOneByOne(t *testing.T) {
	Run(t, func(s *Scheduler) {
		ExpectChan(s, relay(s.Context(), HotChan[string](s, "(abc)|", nil), 0)).ToBe("(abc)|", nil)
		ExpectChan(s, relay(s.Context(), ColdChan[string](s, "(abc)|", nil), 0)).ToBe("(abc)|", nil)
	})
}

// At one instant, channel sources send in the order they were made, as
// observable sources do.
func TestChanOrderWithinAnInstant(t *testing.T) {
	Run(t, func(s *Scheduler) {
		first := ColdChan[string](s, "-a-----|", nil)
		second := ColdChan[string](s, "-b-----|", nil)
		out := make(chan string)
		merge := func(in <-chan string, done chan<- struct{}) {
			for v := range in {
				out <- v
			}
			done <- struct{}{}
		}
		done := make(chan struct{})
		go merge(second, done)
		go merge(first, done)
		go func() {
			<-done
			<-done
			close(out)
		}()
		ExpectChan(s, out).ToBe("-(ab)--|", nil)
	})
}

// ExpectChan reads from its ^: before it, a sender on an unbuffered
// channel blocks, and values sent into a buffer wait; both are recorded
// at ^.
func TestChanExpectFromItsSubscription(t *testing.T) {
	Run(t, func(s *Scheduler) {
		unbuffered := make(chan string)
		go func() {
			unbuffered <- "a" // at frame 0: blocks until frame 3
			time.Sleep(s.Frame())
			unbuffered <- "b"
			close(unbuffered)
		}()
		ExpectChan(s, unbuffered, "---^").ToBe("---a(b|)", nil)

		buffered := make(chan string, 2)
		go func() {
			buffered <- "a"
			time.Sleep(s.Frame())
			buffered <- "b"
			close(buffered)
		}()
		ExpectChan(s, buffered, "---^").ToBe("---(ab|)", nil)
	})
}

// At ! ExpectChan stops receiving; a sender that watches its context (here
// cancelled at the same frame) ends, and nothing leaks.
func TestChanExpectStopsReadingAtItsUnsubscription(t *testing.T) {
	Run(t, func(s *Scheduler) {
		ctx, cancel := context.WithCancel(s.Context())
		time.AfterFunc(4*s.Frame(), cancel)
		src := ColdChan[string](s, "a-b-c-d|", nil)
		ExpectChan(s, relay(ctx, src, 0), "^---!").ToBe("a-b-", nil)
	})
	// A sender that only stops at the end of Run: it is blocked after !,
	// Run's end unblocks it.
	Run(t, func(s *Scheduler) {
		ExpectChan(s, relay(s.Context(), ColdChan[string](s, "a-b-c-d|", nil), 0), "^--!").ToBe("a-b", nil)
	})
}

// A channel never closed is read until WithIdle frames after the last
// event, and Run's end closes a source channel still open, so a reader
// ranging over it ends.
func TestChanNeverClosed(t *testing.T) {
	var ended time.Duration
	Run(t, func(s *Scheduler) {
		ch := make(chan string)
		go func() {
			ch <- "a"
			time.Sleep(2 * s.Frame())
			ch <- "b"
			<-s.Context().Done()
			ended = s.elapsed()
		}()
		ExpectChan(s, ch).ToBe("a-b", nil)
	}, WithIdle(7))
	assert.Equal(t, 10*time.Millisecond, ended, "watched until 7 frames after the expected marble's end")

	msgs := runFake(t, func(s *Scheduler) {
		ExpectChan(s, relay(s.Context(), ColdChan[string](s, "a-b", nil), 0)).ToBe("a-b", nil)
		ExpectChan(s, relay(s.Context(), HotChan[string](s, "^a-b", nil), 0)).ToBe("-a-b", nil)
	})
	assert.Empty(t, msgs)
}

// A sender that sends after closing panics in its own goroutine (recovered
// there); ExpectChan has recorded the close and nothing after it.
func TestChanSendAfterClose(t *testing.T) {
	var recovered any
	Run(t, func(s *Scheduler) {
		ch := make(chan string, 1)
		go func() {
			defer func() { recovered = recover() }()
			ch <- "a"
			close(ch)
			ch <- "b"
		}()
		ExpectChan(s, ch).ToBe("(a|)", nil)
	})
	assert.NotNil(t, recovered)
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

// The failure output is ExpectObservable's.
func TestChanFailureOutput(t *testing.T) {
	obs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(s.Cold("a-b-c|", nil)).ToBe("a-bc-|", nil)
	})
	ch := runFake(t, func(s *Scheduler) {
		ExpectChan(s, ColdChan[string](s, "a-b-c|", nil)).ToBe("a-bc-|", nil)
	})
	require.Len(t, obs, 1)
	require.Len(t, ch, 1)
	assert.Equal(t, stripCaller(obs[0]), stripCaller(ch[0]))
	assert.Regexp(t, `^chan_test\.go:\d+: marble: timelines differ`, ch[0], "reported at the line of ToBe")
	assert.Contains(t, ch[0], "timelines differ at frame 3\n  want: a-bc-|\n  got : a-b-c|\n           ^")
}

// stripCaller removes the file:line of a failure message.
func stripCaller(msg string) string {
	return regexp.MustCompile(`\w+_test\.go:\d+`).ReplaceAllString(msg, "")
}

// Code under test that stops reading a source channel: a cold source's
// values wait for it until Run ends (then the channel is closed and its
// goroutine ends), a hot source's are dropped; nothing leaks either way.
func TestChanSourceWhoseReaderStops(t *testing.T) {
	firstOnly := func(in <-chan string) <-chan string {
		out := make(chan string)
		go func() {
			defer close(out)
			out <- <-in
		}()
		return out
	}
	Run(t, func(s *Scheduler) {
		ExpectChan(s, firstOnly(ColdChan[string](s, "a-b-c|", nil))).ToBe("(a|)", nil)
	})
	msgs := runFake(t, func(s *Scheduler) {
		ExpectChan(s, firstOnly(HotChan[string](s, "a-b|", nil))).ToBe("(a|)", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "marble: HotChan dropped b at frame 2: no receiver was ready")
}
