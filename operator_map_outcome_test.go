package rxthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// startLog records when each call of a ThrottleMap function starts.
type startLog struct {
	mu     sync.Mutex
	start  time.Time
	starts []string
}

func (l *startLog) add(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.starts = append(l.starts, fmt.Sprintf("%v@%v", v, time.Since(l.start)))
}

func (l *startLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.starts...)
}

// TestThrottleMapErrorTokens: what fn's error says decides when its token
// renews. Per(1, 100ms); a fails at 10 ms and b starts when a's token
// renews: a NotSent error gives it back at 10 (b at 10), an Answered one
// releases it at 10 (b at 110), an unmarked one holds it for the
// in-flight bound, 50 ms (b at 160), or releases it at the error with a
// bound of 0 (b at 110).
func TestThrottleMapErrorTokens(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		err   func(error) error
		bound time.Duration
		want  string
	}{
		{"NotSent", rxthrottle.NotSent, 50 * ms, "b@10ms"},
		{"Answered", rxthrottle.Answered, 50 * ms, "b@110ms"},
		{"unmarked", func(err error) error { return err }, 50 * ms, "b@160ms"},
		{"unmarked, bound 0", func(err error) error { return err }, 0, "b@110ms"},
		{"wrapped ErrNotSent", func(err error) error { return fmt.Errorf("dial: %w", rxthrottle.ErrNotSent) }, 50 * ms, "b@10ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := &startLog{start: time.Now()}
				boom := errors.New("boom")
				fn := func(ctx context.Context, v any) (any, error) {
					log.add(v)
					if v == "a" {
						time.Sleep(10 * ms)
						return nil, tc.err(boom)
					}
					return v, nil
				}
				out := rxthrottle.ThrottleMap(rxthrottle.Per(1, 100*ms), fn, rxthrottle.WithInFlightBound(tc.bound))(
					rxgo.Just("a", "b")()).Observe()
				var items []rxgo.Item
				for item := range out {
					items = append(items, item)
				}
				require.Len(t, items, 2)
				require.Error(t, items[0].E)
				require.Equal(t, "b", items[1].V)
				require.Equal(t, []string{"a@0s", tc.want}, log.get())
			})
		})
	}
}

// TestThrottleMapPushback: b is refused once with RetryAfter(200ms): its
// token is released (the server answered), the limiter is paused for 200
// ms, and b is called again then, in its place: c, which came after it,
// cannot start before the pause ends either, and the outputs keep their
// order.
func TestThrottleMapPushback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		log := &startLog{start: time.Now()}
		refused := false
		fn := func(ctx context.Context, v any) (any, error) {
			log.add(v)
			time.Sleep(ms)
			if v == "b" && !refused {
				refused = true
				return nil, rxthrottle.RetryAfter(200*ms, errors.New("429 Too Many Requests"))
			}
			return v, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(5, time.Second), fn, rxthrottle.WithMaxAttempts(3))(rxgo.Just("a", "b", "c")()).Observe()
		start := time.Now()
		got := drain(start, out)
		// a, b and c start at 0; b is refused at 1 and called again at
		// 201, when the pause ends.
		require.ElementsMatch(t, []string{"a@0s", "b@0s", "c@0s", "b@201ms"}, log.get())
		require.Equal(t, []received{{1 * ms, "a"}, {202 * ms, "b"}, {202 * ms, "c"}}, got)
	})
}

// TestThrottleMapPushbackPauses: a pushback pauses the limiter: an item
// arriving during the pause waits for its end, even with tokens free.
func TestThrottleMapPushbackPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		log := &startLog{start: time.Now()}
		var once sync.Once
		fn := func(ctx context.Context, v any) (any, error) {
			log.add(v)
			time.Sleep(ms)
			var err error
			if v == "a" {
				once.Do(func() { err = rxthrottle.RetryAfter(300*ms, errors.New("slow down")) })
			}
			return v, err
		}
		ch := make(chan rxgo.Item)
		go func() {
			defer close(ch)
			ch <- rxgo.Of("a")
			ch <- rxgo.Of("b")
			time.Sleep(100 * ms)
			ch <- rxgo.Of("c")
		}()
		out := rxthrottle.ThrottleMap(rxthrottle.Per(10, time.Second), fn, rxthrottle.WithMaxAttempts(3))(rxgo.FromChannel(ch)).Observe()
		for range out {
		}
		// a and b start at 0; a is refused at 1, which pauses the limiter
		// until 301; c comes at 100 and waits for the pause's end, as does
		// a's retry.
		require.ElementsMatch(t, []string{"a@0s", "b@0s", "a@301ms", "c@301ms"}, log.get())
	})
}

// TestThrottleMapPushbackAttempts: an item refused every time is called
// WithMaxAttempts times, then its output is an error item wrapping the
// last *PushbackError; the items after it go on.
func TestThrottleMapPushbackAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		log := &startLog{start: time.Now()}
		refusal := errors.New("429")
		fn := func(ctx context.Context, v any) (any, error) {
			log.add(v)
			if v == "a" {
				time.Sleep(ms) // b is waiting for a token by then
				return nil, rxthrottle.RetryAfter(10*ms, refusal)
			}
			return v, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(1, 100*ms), fn, rxthrottle.WithMaxAttempts(2))(rxgo.Just("a", "b")()).Observe()
		var items []rxgo.Item
		for item := range out {
			items = append(items, item)
		}
		require.Len(t, items, 2)
		var pe *rxthrottle.PushbackError
		require.ErrorAs(t, items[0].E, &pe)
		require.Equal(t, 10*ms, pe.After)
		require.ErrorIs(t, items[0].E, refusal)
		require.EqualError(t, items[0].E, "rxthrottle: ThrottleMap: item #1: refused 2 times: 429 (retry after 10ms)")
		require.Equal(t, "b", items[1].V)
		// Per(1, 100ms): a at 0. b was waiting for a token already when a
		// was refused at 1, but the retry waits with a higher priority: it
		// takes a's token, renewed at 101 (the pause to 11 is shorter),
		// and is refused again at 102; b takes the retry's token, at 202.
		require.Equal(t, []string{"a@0s", "a@101ms", "b@202ms"}, log.get())
	})
}

// TestThrottleMapRetryTimesOut: a retry that hangs times out at its own
// grant plus the hold timeout, not at the first attempt's.
func TestThrottleMapRetryTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		unblock := make(chan struct{})
		calls := 0
		fn := func(ctx context.Context, v any) (any, error) {
			calls++
			if calls == 1 {
				return nil, rxthrottle.RetryAfter(100*ms, errors.New("429"))
			}
			<-unblock
			return v, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(5, time.Second), fn, rxthrottle.WithHoldTimeout(50*ms), rxthrottle.WithMaxAttempts(3))(rxgo.Just("a")()).Observe()
		start := time.Now()
		got := drain(start, out)
		close(unblock)
		require.Equal(t, []received{{150 * ms, "error: rxthrottle: ThrottleMap: item #1: the call outlived its hold timeout (50ms)"}}, got)
	})
}

func TestThrottleMapOptionErrors(t *testing.T) {
	id := func(_ context.Context, v any) (any, error) { return v, nil }
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	just := rxgo.Just("a")()
	for _, tc := range []struct {
		name string
		out  rxgo.Observable
		want string
	}{
		{"negative bound", rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Second), id, rxthrottle.WithInFlightBound(-time.Second))(just),
			"rxthrottle: ThrottleMap: WithInFlightBound(-1s): the bound must not be negative"},
		{"negative budget", rxthrottle.ThrottleMapWith(b, id, rxthrottle.WithRetryBudget(-1, 0))(just),
			"rxthrottle: ThrottleMapWith: WithRetryBudget(-1, 0): the ratio must be finite and neither may be negative"},
		{"no attempts", rxthrottle.ThrottleMapWith(b, id, rxthrottle.WithMaxAttempts(0))(just),
			"rxthrottle: ThrottleMapWith: WithMaxAttempts(0): at least 1 attempt is required"},
		{"limiter option", rxthrottle.ThrottleMapWith(b, id, rxthrottle.WithHoldTimeout(time.Second))(just),
			"rxthrottle: ThrottleMapWith: rxthrottle.WithHoldTimeout is an option of the limiter: set it on l; ThrottleMapWith reads WithInFlightBound, WithMaxAttempts and WithRetryBudget only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []rxgo.Item
			for item := range tc.out.Observe() {
				got = append(got, item)
			}
			require.Len(t, got, 1)
			require.EqualError(t, got[0].E, tc.want)
		})
	}
}

// TestThrottleMapPushbackBounds: a pushback of 1,000 hours pauses for ten
// minutes, and a negative one for nothing.
func TestThrottleMapPushbackBounds(t *testing.T) {
	for _, tc := range []struct {
		after, want time.Duration
	}{{1000 * time.Hour, 10 * time.Minute}, {-time.Hour, 0}} {
		t.Run(tc.after.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := &startLog{start: time.Now()}
				first := true
				fn := func(ctx context.Context, v any) (any, error) {
					log.add(v)
					if first {
						first = false
						return nil, rxthrottle.RetryAfter(tc.after, nil)
					}
					return v, nil
				}
				for range rxthrottle.ThrottleMap(rxthrottle.Per(5, time.Second), fn, rxthrottle.WithMaxAttempts(3))(rxgo.Just("a")()).Observe() {
				}
				require.Equal(t, []string{"a@0s", fmt.Sprintf("a@%v", tc.want)}, log.get())
			})
		})
	}
}

// TestMapOptionsRefusedByLimiters: ThrottleMap's own options configure no
// limiter, so a limiter's constructor (and Throttle, which builds one)
// refuses them rather than ignore them.
func TestMapOptionsRefusedByLimiters(t *testing.T) {
	for _, o := range []rxthrottle.Option{rxthrottle.WithInFlightBound(time.Second), rxthrottle.WithMaxAttempts(2), rxthrottle.WithRetryBudget(0.1, 1)} {
		_, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), o)
		require.ErrorContains(t, err, "is an option of ThrottleMap and ThrottleMapWith only")
		_, err = rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second), o)
		require.ErrorContains(t, err, "is an option of ThrottleMap and ThrottleMapWith only")
	}
	_, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithMaxAttempts(2))
	require.EqualError(t, err, "rxthrottle: WithMaxAttempts is an option of ThrottleMap and ThrottleMapWith only: a limiter does not read it")
}
