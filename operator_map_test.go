package rxthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
	"github.com/rxthrottle/rxthrottle/marble"
)

// sleepFor returns a ThrottleMap function that sleeps for the duration its
// item names (a time.Duration, or a string's letter from durations) and
// returns the item upper-cased.
func sleepFor(durations map[string]time.Duration) rxgo.Func {
	return func(ctx context.Context, v any) (any, error) {
		s := v.(string)
		select {
		case <-time.After(durations[s]):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return s + "'", nil
	}
}

func TestMarbleThrottleMapHoldsTokens(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		f := s.Frame()
		// Per(2, 4). a and b come at 0 and start at once; a's call takes
		// 3 frames, b's 1. c comes at 4 and starts when b's token renews,
		// 1+4=5 (a window after b's call ended, not after it started, at
		// 0+4); its call takes 2 frames: done at 7. d comes at 5 and
		// waits for a's token, 3+4=7; its call takes no time: done at 7.
		// The outputs keep the input order: b' (done at 1) waits for a'
		// (done at 3); the source completes at 6, the output right after
		// d', at 7.
		fn := sleepFor(map[string]time.Duration{"a": 3 * f, "b": f, "c": 2 * f, "d": 0})
		values := map[string]any{"a": "a'", "b": "b'", "c": "c'", "d": "d'"}
		src := s.Cold("(ab)cd|", nil)
		out := rxthrottle.ThrottleMap(rxthrottle.Per(2, 4*f), fn)(src)
		s.ExpectObservable(out).ToBe("---(ab)(cd|)", values)
	})
}

// TestThrottleMapOrderAndErrors: fn's error comes in its item's place and
// the later items go on; a source error item takes no token, makes no call
// and keeps its place.
func TestThrottleMapOrderAndErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		boom := errors.New("boom")
		var calls []string
		var mu sync.Mutex
		fn := func(ctx context.Context, v any) (any, error) {
			s := v.(string)
			mu.Lock()
			calls = append(calls, s)
			mu.Unlock()
			time.Sleep(map[string]time.Duration{"a": 30 * ms, "b": 5 * ms, "c": 5 * ms, "d": 0}[s])
			if s == "b" {
				return nil, fmt.Errorf("fn failed on %s", s)
			}
			return s + "'", nil
		}
		src := rxgo.Just("a", "b", boom, "c", "d")()
		got := drain(time.Now(), rxthrottle.ThrottleMap(rxthrottle.Per(3, 100*ms), fn)(src).Observe())
		// a, b, c start at 0; d waits for the first token released: c's
		// at 5, renewed at 105 (b's error may have been sent: its token is
		// held for the in-flight bound). Outputs in input order: a' at
		// 30, then b's error, the source's error and c' at once; d' at
		// 105.
		require.Equal(t, []received{
			{30 * ms, "a'"},
			{30 * ms, "error: fn failed on b"},
			{30 * ms, "error: boom"},
			{30 * ms, "c'"},
			{105 * ms, "d'"},
		}, got)
		require.ElementsMatch(t, []string{"a", "b", "c", "d"}, calls)
	})
}

func TestThrottleMapPanicIsAnErrorItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn := func(ctx context.Context, v any) (any, error) {
			if v == "bad" {
				panic("bad item")
			}
			return v, nil
		}
		b, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second))
		require.NoError(t, err)
		var items []rxgo.Item
		for item := range rxthrottle.ThrottleMapWith(b, fn)(rxgo.Just("a", "bad", "c")()).Observe() {
			items = append(items, item)
		}
		require.Len(t, items, 3)
		require.Equal(t, "a", items[0].V)
		var perr *rxthrottle.PanicError
		require.ErrorAs(t, items[1].E, &perr)
		require.EqualError(t, perr, "rxthrottle: ThrottleMapWith: the function panicked on item #2: bad item")
		require.Equal(t, "c", items[2].V)
		// The panicking call may have sent its request: its token is held
		// for the in-flight bound, then released, not kept: all three
		// renewed, none is held.
		time.Sleep(time.Second)
		require.Equal(t, 4, b.Stats().Free, "the panicking call's token is held")
		time.Sleep(rxthrottle.DefaultInFlightBound)
		require.Equal(t, 5, b.Stats().Free)
	})
}

// TestThrottleMapWithLimiterFailure: the item whose Acquire fails gets no
// call; its error comes after the outputs of the calls already started,
// and the output completes; the source is cancelled.
func TestThrottleMapWithLimiterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		l := &failingLimiter{delay: 0, ok: 2, err: errDown}
		var src countingSource
		var calls atomic.Int32
		fn := func(ctx context.Context, v any) (any, error) {
			calls.Add(1)
			time.Sleep(10 * ms)
			return v, nil
		}
		var items []rxgo.Item
		var at []time.Duration
		start := time.Now()
		for item := range rxthrottle.ThrottleMapWith(l, fn)(src.of("a", "b", "c", "d")).Observe() {
			items = append(items, item)
			at = append(at, time.Since(start))
		}
		require.Len(t, items, 3)
		require.Equal(t, []any{"a", "b"}, []any{items[0].V, items[1].V})
		require.ErrorIs(t, items[2].E, errDown)
		require.EqualError(t, items[2].E, "rxthrottle: ThrottleMapWith: item #3 got no token, the limiter failed: store down")
		require.Equal(t, []time.Duration{10 * ms, 10 * ms, 10 * ms}, at)
		require.EqualValues(t, 2, calls.Load())
		synctest.Wait()
		src.mu.Lock()
		defer src.mu.Unlock()
		require.True(t, src.cancelled)
	})
}

// TestThrottleMapCancelEndsCalls cancels Observe's context while calls
// run: fn's context ends at that instant, the output closes, and every
// goroutine ends (synctest fails the test otherwise).
func TestThrottleMapCancelEndsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		var ended []time.Duration
		var mu sync.Mutex
		fn := func(ctx context.Context, v any) (any, error) {
			<-ctx.Done()
			mu.Lock()
			ended = append(ended, time.Since(start))
			mu.Unlock()
			return nil, ctx.Err()
		}
		src := rxgo.Interval(rxgo.WithDuration(ms), rxgo.WithContext(ctx))
		out := rxthrottle.ThrottleMap(rxthrottle.Per(3, time.Hour), fn)(src).Observe(rxgo.WithContext(ctx))
		time.AfterFunc(50*ms, cancel)
		for item := range out {
			t.Fatalf("got %v", item)
		}
		require.Equal(t, 50*ms, time.Since(start))
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []time.Duration{50 * ms, 50 * ms, 50 * ms}, ended, "three calls, ended at the cancellation")
	})
}

// TestThrottleMapSlowDownstream: a consumer that does not read stops the
// operator from taking tokens once 64 results wait for it. The calls made
// are at most: the result being sent, the 64 waiting, the calls under way
// when the acquirer last looked (one per token at most, 50) and the one it
// then started.
func TestThrottleMapSlowDownstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		fn := func(ctx context.Context, v any) (any, error) {
			calls.Add(1)
			return v, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(50, time.Millisecond), fn)(rxgo.Range(0, 10000)).Observe()
		time.Sleep(time.Second) // 50,000 tokens' worth
		require.LessOrEqual(t, calls.Load(), int32(1+64+50+1), "calls made for a consumer that reads nothing")
		n := 0
		for item := range out {
			require.Equal(t, n, item.V)
			n++
		}
		require.Equal(t, 10000, n)
	})
}

func TestThrottleMapBadInput(t *testing.T) {
	id := func(_ context.Context, v any) (any, error) { return v, nil }
	var nilSource rxgo.Observable
	just := rxgo.Just("a")()
	for _, tc := range []struct {
		name string
		out  rxgo.Observable
		want string
	}{
		{"nil fn", rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Second), nil)(just),
			"rxthrottle: ThrottleMap: the function is nil"},
		{"bad limit", rxthrottle.ThrottleMap(rxthrottle.Per(0, time.Second), id)(just),
			"rxthrottle: limit 0 per 1s: N must be at least 1: invalid limit"},
		{"nil source", rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Second), id)(nilSource),
			"rxthrottle: ThrottleMap: the source Observable is nil"},
		{"nil limiter", rxthrottle.ThrottleMapWith(nil, id)(just),
			"rxthrottle: ThrottleMapWith(nil, ...): a Limiter is required"},
		{"typed nil bucket", rxthrottle.ThrottleMapWith((*rxthrottle.Bucket)(nil), id)(just),
			"rxthrottle: ThrottleMapWith(nil, ...): a Limiter is required"},
		{"zero bucket", rxthrottle.ThrottleMapWith(&rxthrottle.Bucket{}, id)(just),
			"rxthrottle: ThrottleMapWith: the *Bucket was not made by NewBucket"},
		{"nil fn with", rxthrottle.ThrottleMapWith(&failingLimiter{}, nil)(just),
			"rxthrottle: ThrottleMapWith: the function is nil"},
		{"nil source with", rxthrottle.ThrottleMapWith(&failingLimiter{}, id)(nilSource),
			"rxthrottle: ThrottleMapWith: the source Observable is nil"},
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

// panickyTokens is a limiterkit.TokenReleaser that panics, as a faulty Limiter outside
// the package might.
type panickyTokens struct{}

func (panickyTokens) ReleaseToken(uint64) { panic("release failed") }
func (panickyTokens) CancelToken(uint64)  { panic("cancel failed") }

type panickyLimiter struct{ rxthrottle.Limiter }

func (panickyLimiter) Acquire(context.Context) (rxthrottle.Token, error) {
	return limiterkit.NewToken(panickyTokens{}, 1), nil
}

// TestThrottleMapReleasePanic: a Token whose Release panics makes its
// item's output a *PanicError; the process and the stream go on.
func TestThrottleMapReleasePanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		id := func(_ context.Context, v any) (any, error) { return v, nil }
		var items []rxgo.Item
		for item := range rxthrottle.ThrottleMapWith(panickyLimiter{}, id)(rxgo.Just("a", "b")()).Observe() {
			items = append(items, item)
		}
		require.Len(t, items, 2)
		for i, item := range items {
			var perr *rxthrottle.PanicError
			require.ErrorAs(t, item.E, &perr)
			require.EqualError(t, perr, fmt.Sprintf("rxthrottle: ThrottleMapWith: the Token's Release or Cancel panicked on item #%d: release failed", i+1))
		}
	})
}

// TestThrottleMapRealClockWindow runs ThrottleMap on the real clock with
// calls of random length and an "arrival" at a random instant inside each
// call (where a server would count the request): never more than N
// arrivals in any window, whatever the machine's load, and nothing lost.
func TestThrottleMapRealClockWindow(t *testing.T) {
	const n, w, items = 4, 20 * time.Millisecond, 40
	var mu sync.Mutex
	var arrivals []time.Duration
	start := time.Now()
	fn := func(ctx context.Context, v any) (any, error) {
		i := v.(int)
		// Deterministic "random" lengths and arrival points: 0-4ms.
		before := time.Duration(i*7%5) * time.Millisecond
		after := time.Duration(i*3%5) * time.Millisecond
		time.Sleep(before)
		mu.Lock()
		arrivals = append(arrivals, time.Since(start))
		mu.Unlock()
		time.Sleep(after)
		return i, nil
	}
	got := 0
	for item := range rxthrottle.ThrottleMap(rxthrottle.Per(n, w), fn)(rxgo.Range(0, items)).Observe() {
		require.Equal(t, got, item.V, "out of order")
		got++
	}
	require.Equal(t, items, got)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, arrivals, items)
	require.LessOrEqual(t, rxthrottle.MaxInWindow(arrivals, w), n)
}
