package rxthrottle_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/marble"
)

// Marble tests of Throttle against SPEC.md: an item arriving at a_i (when
// the source emits it) goes at e_i = max(a_i, e_(i-1), e_(i-N) + W), and the
// output completes right after the last item goes. Frames are 1ms unless
// a test says otherwise; each expected marble is worked out in its comment.

func TestMarbleThrottleIssueExample(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(2, 5): a0 b2 | c=max(4, 0+5)=5 d=max(6, 2+5)=7
		// e=max(8, 5+5)=10 f=max(10, 7+5)=12 g=max(12, 10+5)=15; the
		// source completes at 13, the output right after g, at 15.
		src := s.Cold("a-b-c-d-e-f-g|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(2, 5*s.Frame()))(src)
		s.ExpectObservable(out).ToBe("a-b--c-d--e-f--(g|)", nil)
		s.ExpectSubscriptions(src).ToBe("^------------!")
	})
}

func TestMarbleThrottleBurst(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Five at frame 0, Per(2, 5): two at 0, two when those tokens
		// renew at 5, the last at 10 (the source completed at 7).
		src := s.Cold("(abcde)|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(2, 5*s.Frame()))(src)
		s.ExpectObservable(out).ToBe("(ab)-(cd)-(e|)", nil)
	})
}

func TestMarbleThrottleDesignExample(t *testing.T) {
	// Five per window, seven items at once: the first five at once, the
	// last two one window later. A group of five takes seven frames, so
	// the window is ten frames (1s of 100ms frames) for the marble to
	// have room.
	marble.Run(t, func(s *marble.Scheduler) {
		src := s.Cold("(abcdefg)|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(5, time.Second))(src)
		s.ExpectObservable(out).ToBe("(abcde)---(fg|)", nil)
	}, marble.WithFrame(100*time.Millisecond))
}

func TestMarbleThrottleExactRenewal(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(2, 4): c comes at 4, the instant a's token renews (0+4),
		// and goes at once; so do d (1+4=5), e (4+4=8), f (5+4=9).
		src := s.Cold("ab--cd--ef|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(2, 4*s.Frame()))(src)
		s.ExpectObservable(out).ToBe("ab--cd--ef|", nil)

		// One frame early, c waits for the renewal at 4, and d, which
		// comes at 5, for b's at 5: never later than the formula.
		early := s.Cold("ab-c-d--|", nil)
		out2 := rxthrottle.Throttle(rxthrottle.Per(2, 4*s.Frame()))(early)
		s.ExpectObservable(out2).ToBe("ab--cd--|", nil)
	})
}

func TestMarbleThrottleStrictWindow(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(1, 3) with an item every 2 frames: 0, 3, 6, 9; the
		// renewals, not the arrivals, set the pace.
		src := s.Hot("^a-b-c-d|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(1, 3*s.Frame()))(src)
		s.ExpectObservable(out).ToBe("-a--b--c--(d|)", nil)
	})
}

func TestMarbleThrottleIdleThenBurst(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(2, 10): a0 b0 c=max(4, 0+10)=10. After a long idle gap
		// the tokens are free again: d and e come at 105 and go at once;
		// f comes at 109 and waits for d's token, 105+10=115.
		src := s.Cold("(ab)c 100ms (de)f|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(2, 10*s.Frame()))(src)
		s.ExpectObservable(out).ToBe("(ab)------c 94ms (de)------(f|)", nil)
	})
}

func TestMarbleThrottleCompletionDuringWait(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(1, 5): a0 b5 c10. The source completes at 5, while c
		// waits: the output completes right after c, at 10.
		src := s.Cold("(abc)|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(1, 5*s.Frame()))(src)
		s.ExpectObservable(out).ToBe("a----b----(c|)", nil)
		s.ExpectSubscriptions(src).ToBe("^----!")
	})
}

func TestMarbleThrottleErrorDuringWait(t *testing.T) {
	errDown := errors.New("down")
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(1, 3): a0, b waits until 3; the error comes at 2, behind
		// b, takes no token and keeps its place: right after b, at 3.
		src := s.Cold("ab#", nil, marble.WithError(errDown))
		out := rxthrottle.Throttle(rxthrottle.Per(1, 3*s.Frame()))(src)
		s.ExpectObservable(out).ToBe("a--(b#)", nil, marble.WithError(errDown))

		// An error that comes while items wait does not cut them off:
		// a0 b5 c10, and the error, which came at 0 behind them, right
		// after c.
		src2 := s.Cold("(abc#)", nil, marble.WithError(errDown))
		out2 := rxthrottle.Throttle(rxthrottle.Per(1, 5*s.Frame()))(src2)
		s.ExpectObservable(out2).ToBe("a----b----(c#)", nil, marble.WithError(errDown))
	})
}

func TestMarbleThrottleSeveralLimits(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(2, 3) and Per(3, 10), items at 0..5:
		// a0 b1 c=max(2, 0+3)=3 d=max(3, 1+3, 0+10)=10
		// e=max(4, 10, 3+3, 1+10)=11 f=max(5, 11, 10+3, 3+10)=13.
		src := s.Cold("abcdef|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(2, 3*s.Frame()),
			rxthrottle.WithLimit(rxthrottle.Per(3, 10*s.Frame())))(src)
		s.ExpectObservable(out).ToBe("ab-c------de-(f|)", nil)
	})
}

func TestMarbleThrottleCancellation(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(1, 4): a0 b4, c would go at 8; ! at 7 cancels the
		// subscription, and the cancellation reaches the source.
		src := s.Cold("(abcde)|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(1, 4*s.Frame()))(src)
		s.ExpectObservable(out, "^------!").ToBe("a---b---", nil)
		s.ExpectSubscriptions(src).ToBe("^------!")

		// Subscribed late, at 3: the cold source starts then, and ends
		// with its own | at 6; c, due at 11, is cancelled by ! at 8.
		late := s.Cold("abc|", nil)
		out2 := rxthrottle.Throttle(rxthrottle.Per(1, 4*s.Frame()))(late)
		s.ExpectObservable(out2, "---^----!").ToBe("---a---b", nil)
		s.ExpectSubscriptions(late).ToBe("---^--!")
	})
}

func TestMarbleThrottleWithSharedBucket(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Two pipelines share Per(2, 10). At frame 0, a and c take the
		// two tokens; at 4, b (x was created first) then d wait, both
		// for the renewals at 10.
		b, err := rxthrottle.NewBucket(rxthrottle.Per(2, 10*s.Frame()), rxthrottle.WithClock(s.Clock()))
		require.NoError(s.T(), err)
		x := s.Cold("a---b|", nil)
		y := s.Cold("c---d|", nil)
		s.ExpectObservable(rxthrottle.ThrottleWith(b)(x)).ToBe("a---------(b|)", nil)
		s.ExpectObservable(rxthrottle.ThrottleWith(b)(y)).ToBe("c---------(d|)", nil)
	})
}

func TestMarbleThrottleSlowConsumerKeepsSourceTimes(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// The source emits at its own frames however long the throttle
		// holds items: arrivals stay 0, 1, 2, so Per(1, 2) gives
		// 0, 2, 4, and the Filter behind it adds nothing.
		src := s.Cold("abc|", nil)
		out := rxthrottle.Throttle(rxthrottle.Per(1, 2*s.Frame()))(src).
			Filter(func(any) bool { return true })
		s.ExpectObservable(out).ToBe("a-b-(c|)", nil)
	})
}
