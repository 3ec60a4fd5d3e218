package rxthrottle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

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
		require.LessOrEqual(t, maxInWindow(times, w), n)
		// No needless waiting: 50 items at 3 per window end in window 16.
		require.Equal(t, 16*w, slicesMax(times))
		require.EqualValues(t, 50, quota.Stats().Admitted)
	})
}

// fifoLimiter is a Limiter that is not a *Bucket: it admits one caller per
// window, to exercise the operator's path for other Limiters (such as a
// Redis-backed one).
type fifoLimiter struct {
	mu   sync.Mutex
	next time.Time
	w    time.Duration
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
		require.True(t, quota.Allow() == false, "the cancelled item must not have freed or taken a token")
	})
}

func maxInWindow(times []time.Duration, w time.Duration) int {
	best := 0
	for _, a := range times {
		n := 0
		for _, b := range times {
			if b >= a && b < a+w {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func slicesMax(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
