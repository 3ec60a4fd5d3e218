package marbletest

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle/marble"
)

// debounce is channel code under test, of the kind most Go programs hold:
// it sends the latest value received from in once d has passed without a
// newer one; when in closes, it sends the value still pending (if any) and
// closes its output. It ends, closing its output, when ctx ends.
//
// It waits with a time.Timer, so in a marble test it runs on virtual time.
func debounce[T any](ctx context.Context, in <-chan T, d time.Duration) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		timer := time.NewTimer(d)
		timer.Stop()
		var (
			pending T
			has     bool
		)
		send := func(v T) bool {
			select {
			case out <- v:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			var fire <-chan time.Time
			if has {
				fire = timer.C
			}
			select {
			case v, ok := <-in:
				if !ok {
					if has {
						send(pending)
					}
					return
				}
				pending, has = v, true
				timer.Reset(d)
			case <-fire:
				has = false
				if !send(pending) {
					return
				}
			case <-ctx.Done():
				timer.Stop()
				return
			}
		}
	}()
	return out
}

// A channel test reads as an observable one: marble.ColdChan makes the
// input channel, marble.ExpectChan reads the output. They are generic
// functions (a method cannot take a type parameter), so they take the
// Scheduler as their first argument.

func TestChanDebounceKeepsTheLatestOfABurst(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// a and b come 2 frames apart: b replaces a, and goes 5 frames
		// after it came, at 7. c comes at 9; the input closes at 10,
		// which flushes c at once, and the output closes.
		in := marble.ColdChan[string](s, "a-b------c|", nil)
		out := debounce(s.Context(), in, 5*s.Frame())
		marble.ExpectChan(s, out).ToBe("-------b--(c|)", nil)
	})
}

func TestChanDebounceWithValues(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Letters stand for the values of a map of the channel's type.
		keys := map[string]int{"1": 1, "2": 12, "3": 123, "4": 1234}
		in := marble.ColdChan(s, "1-2-3 10ms 4|", keys)
		out := debounce(s.Context(), in, 3*s.Frame())
		// 3 goes at 7; 4 comes at 15 (10ms is 10 frames) and the close
		// at 16 flushes it.
		marble.ExpectChan(s, out).ToBe("-------3 8ms (4|)", keys)
	})
}

func TestChanDebounceOnAHotChannel(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// A hot channel plays on the test's clock; ^ is frame 0, so a,
		// before it, never reaches the debouncer; b comes at 1, c at 3.
		// The input never closes: ExpectChan reads on until WithIdle
		// frames after the last marble's end, and Run's end closes the
		// input.
		in := marble.HotChan[string](s, "a^b-c--------", nil)
		out := debounce(s.Context(), in, 4*s.Frame())
		marble.ExpectChan(s, out).ToBe("-------c-----", nil)
	})
}

func TestChanDebounceWhenItsReaderGoesAway(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// The reader goes away at frame 6 (the ! of ExpectChan's
		// subscription marble): c, due at 9, finds nobody to take it.
		// The debouncer waits in a select on its context, which ends
		// with Run, so its goroutine ends (Run fails the test if one is
		// left blocked).
		in := marble.ColdChan[string](s, "a----c|", nil)
		out := debounce(s.Context(), in, 4*s.Frame())
		marble.ExpectChan(s, out, "^-----!").ToBe("----a-", nil)
	})
}
