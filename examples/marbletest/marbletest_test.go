package marbletest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle/marble"
)

// spaced is the operator under test, a small one of the kind you would
// write yourself: it lets items through in order, at least gap apart. Item
// i goes at max(its arrival, the previous item's departure + gap). Errors
// pass through in their place, at once.
//
// It waits with the time package, so in a marble test it runs on virtual
// time; it honours the context it is given, so ! (unsubscription) stops it.
func spaced(gap time.Duration) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			in := src.Observe(rxgo.WithContext(ctx))
			var last time.Time
			for item := range in {
				if !item.Error() && !last.IsZero() {
					if wait := time.Until(last.Add(gap)); wait > 0 {
						timer := time.NewTimer(wait)
						select {
						case <-ctx.Done():
							timer.Stop()
							return
						case <-timer.C:
						}
					}
				}
				if !item.SendContext(ctx, next) {
					return
				}
				if !item.Error() {
					last = time.Now()
				}
			}
		}})
	}
}

// Each test reads as: a source marble, the operator, the expected marble.
// A marble is one frame (1ms unless WithFrame says otherwise) per
// character: "a-b|" is a at 0, b at 2, completion at 3. "(ab)" puts a and
// b at one frame, and takes four frames, one per character, as in rxjs.

func TestSpacedLetsSparseItemsThrough(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		src := s.Cold("a---b---c|", nil)
		out := spaced(3 * s.Frame())(src)
		s.ExpectObservable(out).ToBe("a---b---c|", nil)
	})
}

func TestSpacedSpreadsABurst(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Three items at frame 0 leave at 0, 3 and 6; the source
		// completes at 5 (the group takes frames 0 to 4), the output
		// right after c.
		src := s.Cold("(abc)|", nil)
		out := spaced(3 * s.Frame())(src)
		s.ExpectObservable(out).ToBe("a--b--(c|)", nil)
		// The source was subscribed at 0 and its | ended that at 5.
		s.ExpectSubscriptions(src).ToBe("^----!")
	})
}

func TestSpacedWithValues(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Letters stand for the values of the map; without a map, for
		// themselves as strings.
		values := map[string]any{"x": 10, "y": 20}
		src := s.Cold("xy|", values)
		s.ExpectObservable(spaced(2*s.Frame())(src)).ToBe("x-(y|)", values)
	})
}

func TestSpacedPassesErrorsInPlace(t *testing.T) {
	errDown := errors.New("down")
	marble.Run(t, func(s *marble.Scheduler) {
		// # is an error item; WithError says which error. It waits
		// behind b, but takes no gap itself.
		src := s.Cold("ab#", nil, marble.WithError(errDown))
		out := spaced(4 * s.Frame())(src)
		s.ExpectObservable(out).ToBe("a---(b#)", nil, marble.WithError(errDown))
	})
}

func TestSpacedOnAHotSource(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// A hot source plays on the test's clock whoever listens; ^ is
		// frame 0. Subscribing at frame 2 misses a.
		src := s.Hot("^a-b-c--|", nil)
		out := spaced(3 * s.Frame())(src)
		s.ExpectObservable(out, "--^").ToBe("---b--c-|", nil)
	})
}

func TestSpacedStopsWhenUnsubscribed(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// ! in the subscription marble cancels the subscription at
		// frame 4: b, due at 5, never goes, and the cancellation
		// reaches the source before its | at 5.
		src := s.Cold("(abc)|", nil)
		out := spaced(5 * s.Frame())(src)
		s.ExpectObservable(out, "^---!").ToBe("a---", nil)
		s.ExpectSubscriptions(src).ToBe("^---!")
	})
}

func TestSpacedInSeconds(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Time progressions ("2s ") skip long gaps; WithFrame sets the
		// frame length, here 100ms, so one second is 10 frames. c comes
		// at 4+20 = 24 frames; b left at 10, so c goes at once.
		src := s.Cold("(ab) 2s c|", nil)
		out := spaced(time.Second)(src)
		s.ExpectObservable(out).ToBe("a 900ms b 1.3s c|", nil)
	}, marble.WithFrame(100*time.Millisecond))
}
