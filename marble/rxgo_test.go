package marble

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
)

// rxgo's own operators under marbles. Debounce and BufferWithTime read the
// real time package (time.After); inside the bubble that is virtual time.

func TestRxgoMap(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("-a-b-#", nil, WithError(errBoom))
		out := src.Map(func(_ context.Context, v any) (any, error) {
			return strings.ToUpper(v.(string)), nil
		})
		s.ExpectObservable(out).ToBe("-A-B-#", nil, WithError(errBoom))
	})
}

func TestRxgoMapError(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("-1-2-3|", map[string]any{"1": 1, "2": 2, "3": 3})
		out := src.Map(func(_ context.Context, v any) (any, error) {
			if v.(int) == 2 {
				return nil, errBoom
			}
			return v.(int) * 10, nil
		})
		s.ExpectObservable(out).ToBe("-x-#", map[string]any{"x": 10}, WithError(errBoom))
		s.ExpectSubscriptions(src).ToBe("^")
	})
}

func TestRxgoFilter(t *testing.T) {
	Run(t, func(s *Scheduler) {
		values := map[string]any{"a": 1, "b": 2, "c": 3, "d": 4}
		src := s.Hot("-a-^b-c-d-|", values)
		out := src.Filter(func(v any) bool { return v.(int)%2 == 0 })
		s.ExpectObservable(out).ToBe("-b---d-|", values)
	})
}

func TestRxgoDebounce(t *testing.T) {
	Run(t, func(s *Scheduler) {
		// rxgo's Debounce emits the latest value once 5 frames pass
		// without a new one, and drops a pending value when the source
		// completes.
		src := s.Cold("a-b------c|", nil)
		out := src.Debounce(rxgo.WithDuration(5 * s.Frame()))
		s.ExpectObservable(out).ToBe("-------b--|", nil)
	})
}

func TestRxgoBufferWithTime(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b-c-d-e|", nil)
		out := src.BufferWithTime(rxgo.WithDuration(5 * s.Frame()))
		s.ExpectObservable(out).ToBe("-----x---(y|)", map[string]any{
			"x": []any{"a", "b", "c"},
			"y": []any{"d", "e"},
		})
	})
}

func TestRxgoBufferWithTimeTickAtEmission(t *testing.T) {
	// b comes at frame 5, the instant the buffer's timer fires: the
	// pipeline's timers settle before the sources emit, so [a] goes at 5
	// and b waits for the next buffer, on every run.
	for i := 0; i < 20; i++ {
		Run(t, func(s *Scheduler) {
			src := s.Cold("a----b|", nil)
			out := src.BufferWithTime(rxgo.WithDuration(5 * s.Frame()))
			s.ExpectObservable(out).ToBe("-----x(y|)", map[string]any{
				"x": []any{"a"},
				"y": []any{"b"},
			})
		})
	}
}

func TestRxgoDelayViaSleep(t *testing.T) {
	// Any operator that waits with the time package lands on frames:
	// here a Map that sleeps 1.5s, with frames of 500ms.
	Run(t, func(s *Scheduler) {
		src := s.Cold("a|", nil)
		out := src.Map(func(_ context.Context, v any) (any, error) {
			time.Sleep(1500 * time.Millisecond)
			return v, nil
		})
		s.ExpectObservable(out).ToBe("1.5s (a|)", nil)
	}, WithFrame(500*time.Millisecond))
}

func TestRxgoTakeLeavesItsSourceSubscribed(t *testing.T) {
	Run(t, func(s *Scheduler) {
		// Unlike rxjs's, rxgo's Take completes only when the item after
		// the n-th arrives (b at 2), and does not cancel its source: the
		// subscription stays open (and the source's producer blocked)
		// until Run cancels everything.
		src := s.Cold("a-b-c|", nil)
		s.ExpectObservable(src.Take(1)).ToBe("a-|", nil)
		s.ExpectSubscriptions(src).ToBe("^")
	})
}
