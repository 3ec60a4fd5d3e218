package marble

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errBoom = errors.New("boom")

// TestSymbols runs each symbol of the syntax through a cold source and back.
func TestSymbols(t *testing.T) {
	tests := []struct {
		name, source, want string
		values             map[string]any
	}{
		{"dashes are frames", "---a", "---a", nil},
		{"letters and digits", "aZ09", "aZ09", nil},
		{"complete", "-a-|", "-a-|", nil},
		{"error", "-a-#", "-a-#", nil},
		{"group at one frame", "-(ab)-c", "-(ab)-c", nil},
		{"group then complete", "(a|)", "(a|)", nil},
		{"group takes its width", "(ab)c", "(ab)c", nil},
		{"spaces align", " a  b ", "ab", nil},
		{"time progression", "a 9ms b", "a---------b", nil},
		{"time progression in seconds", "a 1s |", "a 1s |", nil},
		{"time progression in minutes", "2m a", "2m a", nil},
		{"empty never completes", "", "", nil},
		{"values map", "a-b|", "a-b|", map[string]any{"a": 1, "b": []int{2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Run(t, func(s *Scheduler) {
				s.ExpectObservable(s.Cold(tt.source, tt.values)).ToBe(tt.want, tt.values)
			})
		})
	}
}

func TestValuesDefaultToStrings(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a1|", nil)
		s.ExpectObservable(src).ToBe("a1|", map[string]any{"a": "a", "1": "1"})
	})
}

func TestErrorValue(t *testing.T) {
	Run(t, func(s *Scheduler) {
		s.ExpectObservable(s.Cold("-#", nil)).ToBe("-#", nil, WithError(ErrMarble))
		src := s.Cold("a#", nil, WithError(errBoom))
		s.ExpectObservable(src).ToBe("a#", nil, WithError(errBoom))
		// errors.Is: a wrapped error matches.
		wrapped := s.Cold("#", nil, WithError(errors.Join(errBoom, errors.New("more"))))
		s.ExpectObservable(wrapped).ToBe("#", nil, WithError(errBoom))
	})
	msgs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(s.Cold("a#", nil)).ToBe("a#", nil, WithError(errBoom))
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "only in want:\n    frame 1: # = boom")
	assert.Contains(t, msgs[0], "only in got:\n    frame 1: # = marble: error")
}

func TestHot(t *testing.T) {
	Run(t, func(s *Scheduler) {
		// Frame 0 is the ^; events before it are never seen.
		src := s.Hot("--a--^--b--c--|", nil)
		s.ExpectObservable(src).ToBe("---b--c--|", nil)
		s.ExpectObservable(src, "----^").ToBe("------c--|", nil)
		// A subscriber after the end gets the | at once.
		s.ExpectObservable(src, "------------^").ToBe("------------|", nil)
		s.ExpectSubscriptions(src).ToBe("^--------!", "----^----!", "------------(^!)")
	})
}

func TestHotEndedBeforeTheTest(t *testing.T) {
	Run(t, func(s *Scheduler) {
		s.ExpectObservable(s.Hot("a|-^--", nil)).ToBe("|", nil)
		s.ExpectObservable(s.Hot("#^", nil)).ToBe("#", nil)
	})
}

func TestHotWithoutCaret(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Hot("a-b-c", nil)
		s.ExpectObservable(src).ToBe("a-b-c", nil)
		s.ExpectObservable(src, "-^").ToBe("--b-c", nil)
	})
}

func TestHotEventAtSubscriptionFrame(t *testing.T) {
	// Subscriptions come before emissions at one instant, as in rxjs.
	Run(t, func(s *Scheduler) {
		src := s.Hot("^-a-b|", nil)
		s.ExpectObservable(src, "--^").ToBe("--a-b|", nil)
	})
}

func TestColdStartsAtSubscription(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b|", nil)
		s.ExpectObservable(src).ToBe("a-b|", nil)
		s.ExpectObservable(src, "---^").ToBe("---a-b|", nil)
		s.ExpectSubscriptions(src).ToBe("^--!", "---^--!")
	})
}

func TestUnsubscription(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b-c-d|", nil)
		s.ExpectObservable(src, "^---!").ToBe("a-b-", nil)
		s.ExpectSubscriptions(src).ToBe("^---!")
	})
}

func TestUnsubscriptionBeforeSameFrameEvent(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b-c|", nil)
		s.ExpectObservable(src, "^-!").ToBe("a-", nil)
		hot := s.Hot("a-b-c|", nil)
		s.ExpectObservable(hot, "-^!").ToBe("--", nil)
		s.ExpectObservable(s.Cold("a|", nil), "(^!)").ToBe("", nil)
	})
}

func TestUnsubscriptionReachesSourceThroughOperators(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b-c-d|", nil)
		out := src.Map(func(_ context.Context, v any) (any, error) { return v.(string) + v.(string), nil }).
			Filter(func(v any) bool { return v != "cc" })
		s.ExpectObservable(out, "--^----!").ToBe("--a-b---", map[string]any{"a": "aa", "b": "bb"})
		s.ExpectSubscriptions(src).ToBe("--^----!")
	})
}

func TestSubscriptionStillOpenAtEnd(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b", nil)
		s.ExpectObservable(src).ToBe("a-b", nil)
		s.ExpectSubscriptions(src).ToBe("^")
	})
}

func TestSameFrameOrder(t *testing.T) {
	// rxgo.Merge reads its sources on separate goroutines, yet the
	// scheduler settles each emission before the next, in the order the
	// sources were created: the same on every run.
	for i := 0; i < 20; i++ {
		Run(t, func(s *Scheduler) {
			x := s.Cold("a-----c-----(eg)-|", nil)
			y := s.Cold("b-----d-----f|", nil)
			s.ExpectObservable(rxgo.Merge([]rxgo.Observable{y, x})).ToBe("(ab)--(cd)--(egf)|", nil)
		})
	}
}

func TestSlowSubscriberDoesNotShiftSource(t *testing.T) {
	// The pipeline takes 3 frames per item; the source still emits at
	// frames 0, 1, 2, so the items leave at 3, 6, 9, not 3, 7, 11.
	Run(t, func(s *Scheduler) {
		src := s.Cold("abc|", nil)
		var arrivals []int64
		out := src.Map(func(_ context.Context, v any) (any, error) {
			time.Sleep(3 * s.Frame())
			arrivals = append(arrivals, s.Now())
			return v, nil
		})
		s.ExpectObservable(out).ToBe("---a--b--(c|)", nil)
		s.ExpectSubscriptions(src).ToBe("^--!")
		t.Cleanup(func() { assert.Equal(t, []int64{3, 6, 9}, arrivals) })
	})
}

func TestFrameOption(t *testing.T) {
	Run(t, func(s *Scheduler) {
		assert.Equal(t, 10*time.Millisecond, s.Frame())
		out := s.Cold("a-b|", nil).Map(func(_ context.Context, v any) (any, error) {
			time.Sleep(20 * time.Millisecond)
			return v, nil
		})
		// b arrives at frame 2 while a is still in Map, so it leaves two
		// frames after a, with the completion the source sent at frame 3.
		s.ExpectObservable(out).ToBe("--a-(b|)", nil)
		// "100ms " is ten frames of 10ms.
		s.ExpectObservable(s.Cold("100ms a|", nil)).ToBe("----------a|", nil)
	}, WithFrame(10*time.Millisecond))
}

func TestNowAndClock(t *testing.T) {
	Run(t, func(s *Scheduler) {
		assert.Equal(t, int64(0), s.Now())
		var at []int64
		var clockAt []time.Duration
		start := s.Clock().Now()
		out := s.Cold("a--b|", nil).Map(func(_ context.Context, v any) (any, error) {
			at = append(at, s.Now())
			clockAt = append(clockAt, s.Clock().Since(start))
			return v, nil
		})
		s.ExpectObservable(out).ToBe("a--b|", nil)
		t.Cleanup(func() {
			assert.Equal(t, []int64{0, 3}, at)
			assert.Equal(t, []time.Duration{0, 3 * time.Millisecond}, clockAt)
		})
	})
}

func TestNeverEndingObservableStopsAtHorizon(t *testing.T) {
	Run(t, func(s *Scheduler) {
		s.ExpectObservable(s.Hot("-a--b", nil)).ToBe("-a--b", nil)
	})
	// rxgo.Never ignores its context and never closes: Run gives up on it
	// after an hour of virtual time and logs it.
	msgs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(rxgo.Never()).ToBe("", nil)
	})
	require.Len(t, msgs, 1)
	assert.Regexp(t, `^scheduler_test.go:\d+: marble: the observed pipeline had not closed its channel`, msgs[0])
	// An event after the last marble but within the idle frames is seen.
	msgs = runFake(t, func(s *Scheduler) {
		late := s.Cold("a", nil).Map(func(_ context.Context, v any) (any, error) {
			time.Sleep(500 * time.Millisecond)
			return v, nil
		})
		s.ExpectObservable(late).ToBe("", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "frame 500: a = \"a\"")
	// And not beyond it.
	Run(t, func(s *Scheduler) {
		late := s.Cold("a", nil).Map(func(_ context.Context, v any) (any, error) {
			time.Sleep(500 * time.Millisecond)
			return v, nil
		})
		s.ExpectObservable(late).ToBe("", nil)
	}, WithIdle(100))
}

func TestUnsubscribedSource(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a|", nil)
		s.ExpectSubscriptions(src).ToBe()
		s.ExpectSubscriptions(s.Hot("a|", nil)).ToBe()
	})
	msgs := runFake(t, func(s *Scheduler) {
		s.ExpectSubscriptions(s.Cold("a|", nil)).ToBe("^!")
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "subscriptions differ\n  want: ^!\n  got : (no subscription)")
}

func TestObserveFromTestCode(t *testing.T) {
	// Subscribing by hand in fn works too (the subscription is at frame
	// 0); read the channel on a goroutine, since fn must not wait.
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b|", nil)
		var got []any
		done := make(chan struct{})
		go func() {
			defer close(done)
			for item := range src.Observe() {
				got = append(got, item.V)
			}
		}()
		s.ExpectSubscriptions(src).ToBe("^--!")
		s.T().Cleanup(func() {
			<-done
			assert.Equal(t, []any{"a", "b"}, got)
		})
	})
}
