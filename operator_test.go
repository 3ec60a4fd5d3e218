package rxthrottle_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
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

func TestMarbleThrottleByKeysAreIndependent(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(1, 5) per key; the key is the letter's case. The upper-case
		// items wait 5 frames each behind A; the lower-case ones do not
		// wait behind them: b comes at 3 and goes at once, c at 8
		// (b's token renews at 8).
		src := s.Cold("AB-b-C--c|", nil)
		byCase := func(v any) string {
			if l := v.(string); l == strings.ToUpper(l) {
				return "upper"
			}
			return "lower"
		}
		out := rxthrottle.ThrottleBy(rxthrottle.Per(1, 5*s.Frame()), byCase)(src)
		s.ExpectObservable(out).ToBe("A--b-B--c-(C|)", nil)
	})
}

func TestMarbleThrottlePause(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Per(3, 20). At frame 2 a 429 says "retry at 8": b, c and d
		// wait until 8 and then go as far as the tokens allow: b and c
		// at 8, d when a's token renews, at 20.
		b, err := rxthrottle.NewBucket(rxthrottle.Per(3, 20*s.Frame()), rxthrottle.WithClock(s.Clock()))
		require.NoError(s.T(), err)
		s.Clock().AfterFunc(2*s.Frame(), func() { b.Pause(s.Clock().Now().Add(6 * s.Frame())) })
		src := s.Cold("a--bcd|", nil)
		s.ExpectObservable(rxthrottle.ThrottleWith(b)(src)).ToBe("a-------(bc)--------(d|)", nil)
	})
}

// received is one item as the consumer saw it.
type received struct {
	at time.Duration
	v  any
}

// drain reads ch to its end, stamping each item with the virtual time since
// start; error items are recorded by their message.
func drain(start time.Time, ch <-chan rxgo.Item) []received {
	var out []received
	for item := range ch {
		v := item.V
		if item.Error() {
			v = "error: " + item.E.Error()
		}
		out = append(out, received{time.Since(start), v})
	}
	return out
}

func TestThrottleInvalidLimitEmitsOneError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := rxthrottle.Throttle(rxthrottle.Per(0, time.Second))(rxgo.Just(1, 2, 3)())
		got := drain(time.Now(), out.Observe())
		require.Equal(t, []received{{0, "error: rxthrottle: limit 0 per 1s: N must be at least 1: invalid limit"}}, got)

		out = rxthrottle.Throttle(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(nil))(rxgo.Just(1)())
		got = drain(time.Now(), out.Observe())
		require.Equal(t, []received{{0, "error: rxthrottle: WithClock(nil): a clock is required"}}, got)

		out = rxthrottle.ThrottleWith(nil)(rxgo.Just(1)())
		got = drain(time.Now(), out.Observe())
		require.Equal(t, []received{{0, "error: rxthrottle: ThrottleWith(nil): a Limiter is required"}}, got)
	})
}

// TestThrottleIsLazyAndPerObserve checks that nothing runs before Observe and
// that every Observe gets a bucket of its own.
func TestThrottleIsLazyAndPerObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		subscribed := 0
		src := rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			subscribed++
			for _, v := range []string{"a", "b", "c"} {
				rxgo.Of(v).SendContext(ctx, next)
			}
		}})
		out := rxthrottle.Throttle(rxthrottle.Per(2, 10*ms))(src)
		time.Sleep(time.Second)
		require.Zero(t, subscribed, "the source ran before Observe")

		start := time.Now()
		want := []received{{0, "a"}, {0, "b"}, {10 * ms, "c"}}
		require.Equal(t, want, drain(start, out.Observe()))
		// A second subscription starts with a full bucket of its own.
		start = time.Now()
		require.Equal(t, want, drain(start, out.Observe()))
		require.Equal(t, 2, subscribed)
	})
}

// TestThrottleErrorItemsKeepTheirPlace: an error item waits behind the items
// before it, takes no token, and does not end the stream.
func TestThrottleErrorItemsKeepTheirPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		boom := errors.New("boom")
		src := rxgo.Just("a", "b", boom, "c", "d")()
		out := rxthrottle.Throttle(rxthrottle.Per(1, 10*ms))(src)
		got := drain(time.Now(), out.Observe())
		require.Equal(t, []received{
			{0, "a"}, {10 * ms, "b"}, {10 * ms, "error: boom"}, {20 * ms, "c"}, {30 * ms, "d"},
		}, got)
	})
}

// TestThrottleWithSharesOneQuota runs two pipelines and plain Wait callers on
// one bucket: together they never exceed it, and nothing is lost.
func TestThrottleWithSharesOneQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, w = 3, 10 * time.Millisecond
		quota, err := rxthrottle.NewBucket(rxthrottle.Per(n, w))
		require.NoError(t, err)
		start := time.Now()
		var mu sync.Mutex
		var times []time.Duration
		stamp := func() {
			mu.Lock()
			times = append(times, time.Since(start))
			mu.Unlock()
		}
		var wg sync.WaitGroup
		for p := range 2 {
			wg.Go(func() {
				src := rxgo.Range(p*100, 20)
				got := 0
				for item := range rxthrottle.ThrottleWith(quota)(src).Observe() {
					assert.Equal(t, p*100+got, item.V, "pipeline %d out of order", p)
					got++
					stamp()
				}
				assert.Equal(t, 20, got)
			})
		}
		for range 10 {
			wg.Go(func() {
				assert.NoError(t, quota.Wait(context.Background()))
				stamp()
			})
		}
		wg.Wait()
		require.Len(t, times, 50)
		require.LessOrEqual(t, rxthrottle.MaxInWindow(times, w), n)
		// No needless waiting: 50 items at 3 per window end in window 16.
		require.Equal(t, 16*w, slices.Max(times))
		require.EqualValues(t, 50, quota.Stats().Admitted)
	})
}

// fifoLimiter is a Limiter that is not a *Bucket: it admits one caller per
// window, to exercise the operator's path for other Limiters (such as a
// Redis-backed one).
type fifoLimiter struct {
	rxthrottle.Limiter // the methods the operator does not call
	mu                 sync.Mutex
	next               time.Time
	w                  time.Duration
}

func (f *fifoLimiter) Wait(ctx context.Context) error {
	f.mu.Lock()
	at := f.next
	if now := time.Now(); at.Before(now) {
		at = now
	}
	f.next = at.Add(f.w)
	f.mu.Unlock()
	select {
	case <-time.After(time.Until(at)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Acquire is Wait, with a zero Token: ThrottleWith holds each item's
// token until the downstream has it.
func (f *fifoLimiter) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, f.Wait(ctx)
}
func (f *fifoLimiter) Pause(time.Time)         {}
func (f *fifoLimiter) Stats() rxthrottle.Stats { return rxthrottle.Stats{} }

func TestThrottleWithAnyLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		l := &fifoLimiter{w: 5 * ms}
		got := drain(time.Now(), rxthrottle.ThrottleWith(l)(rxgo.Just("a", errors.New("x"), "b", "c")()).Observe())
		require.Equal(t, []received{{0, "a"}, {0, "error: x"}, {5 * ms, "b"}, {10 * ms, "c"}}, got)
	})
}

// TestThrottleDisposeStopsEverything cancels the context of a subscription
// whose item is waiting for a token: the output closes at once and every
// goroutine ends (synctest.Test fails otherwise).
func TestThrottleDisposeStopsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		src := rxgo.Interval(rxgo.WithDuration(ms), rxgo.WithContext(ctx))
		quota, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Hour))
		require.NoError(t, err)
		out := rxthrottle.ThrottleWith(quota)(src).Observe(rxgo.WithContext(ctx))
		<-out // the first item goes; the second waits an hour
		time.Sleep(5 * ms)
		cancel()
		_, open := <-out
		require.False(t, open)
		synctest.Wait()
		st := quota.Stats()
		require.EqualValues(t, 1, st.Admitted)
		require.Zero(t, st.Queued)
		require.True(t, rxthrottle.AllowNow(quota) == false, "the cancelled item must not have freed or taken a token")
	})
}
