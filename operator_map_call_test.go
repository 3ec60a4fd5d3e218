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

// TakeCallToken: the taker ends the token, ThrottleMap leaves it alone
// whatever fn returns. Per(1, 1s): a's fn takes its token, releases it
// 300 ms later from another goroutine and returns a NotSent error at
// once, whose token ThrottleMap would give back at once: b starts at
// 1.3 s, one window after the taker's release.
func TestTakeCallToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		started := map[string]time.Duration{}
		var wg sync.WaitGroup
		fn := func(ctx context.Context, v any) (any, error) {
			mu.Lock()
			started[v.(string)] = time.Since(start)
			mu.Unlock()
			if v != "a" {
				return v, nil
			}
			tok, l, ok := rxthrottle.TakeCallToken(context.WithValue(ctx, wrappedKey{}, 1))
			require.True(t, ok)
			require.NotNil(t, l)
			_, _, again := rxthrottle.TakeCallToken(ctx)
			assert.False(t, again, "a call's token is taken once")
			wg.Go(func() { time.Sleep(300 * time.Millisecond); tok.Release() })
			return nil, rxthrottle.NotSent(errors.New("x")) // ThrottleMap would give the token back now
		}
		var got []any
		for item := range rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Second), fn)(rxgo.Just("a", "b")()).Observe() {
			if item.E != nil {
				got = append(got, "error")
				continue
			}
			got = append(got, item.V)
		}
		wg.Wait()
		assert.Equal(t, []any{"error", "b"}, got)
		assert.Equal(t, map[string]time.Duration{"a": 0, "b": 1300 * time.Millisecond}, started)
		_, _, ok := rxthrottle.TakeCallToken(context.Background())
		assert.False(t, ok, "outside a call")
	})
}

// wrappedKey is a context key of fn's own, wrapping the call's context.
type wrappedKey struct{}

// TestThrottleMapCallContextEnds: fn's context ends for every goroutine
// fn leaves behind, whether it asked for Done before fn returned, after,
// or never, and reports context.Canceled once ended; run with -race, it
// checks that the context's end and its readers are ordered (its Err and
// Done read without the call's lock).
func TestThrottleMapCallContextEnds(t *testing.T) {
	const items = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*items)
	fn := func(ctx context.Context, v any) (any, error) {
		i := v.(int)
		var early <-chan struct{}
		if i%3 == 0 {
			early = ctx.Done() // asked while the call runs
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := early
			if done == nil {
				if i%3 == 1 {
					_ = ctx.Err() // read while it may be ending
				}
				done = ctx.Done() // asked while, or after, it ends
			}
			<-done
			errs <- ctx.Err()
		}()
		return v, nil
	}
	src := make([]any, items)
	for i := range src {
		src[i] = i
	}
	out := rxthrottle.ThrottleMap(rxthrottle.Per(1000, time.Nanosecond), fn)(rxgo.Just(src...)()).Observe()
	n := 0
	for item := range out {
		require.NoError(t, item.E)
		n++
	}
	wg.Wait()
	close(errs)
	require.Equal(t, items, n)
	ended := 0
	for err := range errs {
		require.ErrorIs(t, err, context.Canceled)
		ended++
	}
	require.Equal(t, items, ended)
}
