package rxthrottle_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// collectFor reads out on a goroutine of its own and returns, after d, the
// items read so far and whether out had closed.
func collectFor(d time.Duration, out <-chan rxgo.Item) (items []rxgo.Item, closed bool) {
	var mu sync.Mutex
	done := false
	go func() {
		for item := range out {
			mu.Lock()
			items = append(items, item)
			mu.Unlock()
		}
		mu.Lock()
		done = true
		mu.Unlock()
	}()
	time.Sleep(d)
	mu.Lock()
	defer mu.Unlock()
	return append([]rxgo.Item(nil), items...), done
}

// TestThrottleMapHoldTimeoutEndsCall is issue 17's case: one call that
// hangs, with a 50 ms hold timeout, must not stall the stream. fn's context
// ends at the hold timeout; the hung item becomes an error item wrapping
// ErrHoldTimeout in its place at that instant, the later outputs follow and
// the output completes, whether fn honours its context or ignores it (the
// late result of the one that ignores it is discarded).
func TestThrottleMapHoldTimeoutEndsCall(t *testing.T) {
	for _, honours := range []bool{true, false} {
		name := map[bool]string{true: "fn honours its context", false: "fn ignores its context"}[honours]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ms := time.Millisecond
				unblock := make(chan struct{})
				var ctxEnded atomic.Int64 // written by a detached worker
				start := time.Now()
				fn := func(ctx context.Context, v any) (any, error) {
					if v != "a" {
						return v.(string) + "'", nil
					}
					if honours {
						<-ctx.Done()
						ctxEnded.Store(int64(time.Since(start)))
						return nil, ctx.Err()
					}
					<-unblock // hangs until the test ends
					return "late", nil
				}
				out := rxthrottle.ThrottleMap(rxthrottle.Per(5, time.Second), fn,
					rxthrottle.WithHoldTimeout(50*ms))(rxgo.Just("a", "b", "c")()).Observe()
				items, closed := collectFor(2*time.Second, out)
				close(unblock)
				require.True(t, closed, "the output must complete")
				require.Len(t, items, 3)
				require.ErrorIs(t, items[0].E, rxthrottle.ErrHoldTimeout)
				require.ErrorIs(t, items[0].E, context.DeadlineExceeded)
				require.EqualError(t, items[0].E, "rxthrottle: ThrottleMap: item #1: the call outlived its hold timeout (50ms)")
				require.Equal(t, []any{"b'", "c'"}, []any{items[1].V, items[2].V})
				if honours {
					require.Equal(t, 50*ms, time.Duration(ctxEnded.Load()), "fn's context ends at the hold timeout")
				}
				synctest.Wait() // the detached worker ends once fn returns
			})
		})
	}
}

// TestThrottleMapHoldTimeoutTimes checks the instants: the timed-out item's
// error goes at departure + hold timeout, b' (done at once) waits for it,
// and the token of the hung call renews W after the hold timeout, so d,
// which needs it, starts then.
func TestThrottleMapHoldTimeoutTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		unblock := make(chan struct{})
		fn := func(ctx context.Context, v any) (any, error) {
			if v == "a" {
				<-unblock
			}
			return v, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(2, 100*ms), fn,
			rxthrottle.WithHoldTimeout(30*ms))(rxgo.Just("a", "b", "c")()).Observe()
		start := time.Now()
		var got []received
		for item := range out {
			v := item.V
			if errors.Is(item.E, rxthrottle.ErrHoldTimeout) {
				v = "timeout"
			}
			got = append(got, received{time.Since(start), v})
		}
		close(unblock)
		// a and b go at 0; b's token renews at 100; a's hold ends at 30 and
		// renews at 130. c takes the first token renewed: b's, at 100.
		require.Equal(t, []received{{30 * ms, "timeout"}, {30 * ms, "b"}, {100 * ms, "c"}}, got)
	})
}

// TestThrottleMapHoldTimeoutAfterQuickCalls: the watchdog, set for the
// first call's deadline and not set again for the calls after it, fires
// early for a later call that hangs and sets itself for that call's own
// deadline: c, granted at 20 ms (a's and b's tokens renew at 10 and 20),
// times out at 20 + 30 ms, not at a's 30 ms nor b's 40 ms, and never
// stalls the output.
func TestThrottleMapHoldTimeoutAfterQuickCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		start := time.Now()
		var ended atomic.Int64 // written by c's worker, detached
		fn := func(ctx context.Context, v any) (any, error) {
			if v == "c" {
				<-ctx.Done()
				ended.Store(int64(time.Since(start)))
				return nil, ctx.Err()
			}
			return v, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(1, 10*ms), fn,
			rxthrottle.WithHoldTimeout(30*ms))(rxgo.Just("a", "b", "c", "d")()).Observe()
		var got []received
		for item := range out {
			v := item.V
			if errors.Is(item.E, rxthrottle.ErrHoldTimeout) {
				v = "timeout"
			}
			got = append(got, received{time.Since(start), v})
		}
		synctest.Wait()
		// d waits for c's token: its hold ends at 50 and renews at 60.
		require.Equal(t, []received{{0, "a"}, {10 * ms, "b"}, {50 * ms, "timeout"}, {60 * ms, "d"}}, got)
		require.Equal(t, 50*ms, time.Duration(ended.Load()), "c's context ends at its own deadline")
	})
}

// TestThrottleMapHoldTimeoutAfterCancel: the subscription is cancelled
// while a call that ignores its context runs; the output still closes, at
// the call's hold timeout at the latest.
func TestThrottleMapHoldTimeoutAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		unblock := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		fn := func(context.Context, any) (any, error) {
			<-unblock
			return nil, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Second), fn,
			rxthrottle.WithHoldTimeout(80*ms))(rxgo.Just("a")()).Observe(rxgo.WithContext(ctx))
		start := time.Now()
		time.AfterFunc(10*ms, cancel)
		for item := range out {
			t.Errorf("got %v", item)
		}
		require.Equal(t, 80*ms, time.Since(start))
		close(unblock)
	})
}

type ctxKey struct{}

// TestThrottleMapCallContext: fn's context has the deadline (its grant +
// the hold timeout), carries the values of Observe's context, ends the
// contexts derived from it at the deadline, and is ended once fn has
// returned, for a fn that kept it.
func TestThrottleMapCallContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		start := time.Now()
		var kept context.Context
		fn := func(ctx context.Context, v any) (any, error) {
			if v == "kept" {
				kept = ctx
				require.NoError(t, ctx.Err())
				return v, nil
			}
			d, ok := ctx.Deadline()
			require.True(t, ok)
			require.Equal(t, 40*ms, d.Sub(start))
			require.Equal(t, "value", ctx.Value(ctxKey{}))
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			<-child.Done()
			require.Equal(t, 40*ms, time.Since(start))
			return nil, child.Err()
		}
		obsCtx := context.WithValue(context.Background(), ctxKey{}, "value")
		out := rxthrottle.ThrottleMap(rxthrottle.Per(2, time.Second), fn, rxthrottle.WithHoldTimeout(40*ms))(
			rxgo.Just("kept", "child")()).Observe(rxgo.WithContext(obsCtx))
		var items []rxgo.Item
		for item := range out {
			items = append(items, item)
		}
		require.Len(t, items, 2)
		require.Equal(t, "kept", items[0].V)
		require.ErrorIs(t, items[1].E, rxthrottle.ErrHoldTimeout)
		require.ErrorIs(t, kept.Err(), context.Canceled, "ended once fn returned")
		<-kept.Done()
	})
}

// TestThrottleMapCallContextCause: with a cancellable Observe context,
// context.Cause of fn's context ended by its deadline is not nil (net/http
// returns context.Cause as a cancelled request's error), and a context
// derived from it ends with it.
func TestThrottleMapCallContextCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obsCtx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var cause, childCause error
		fn := func(ctx context.Context, v any) (any, error) {
			child, stop := context.WithCancel(ctx)
			defer stop()
			<-child.Done()
			cause, childCause = context.Cause(ctx), context.Cause(child)
			return nil, ctx.Err()
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Second), fn, rxthrottle.WithHoldTimeout(10*time.Millisecond))(
			rxgo.Just("a")()).Observe(rxgo.WithContext(obsCtx))
		for range out {
		}
		synctest.Wait()
		require.ErrorIs(t, cause, context.DeadlineExceeded)
		require.ErrorIs(t, childCause, context.DeadlineExceeded)
	})
}
