package rxthrottle_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestThrottleMapHoldTimeoutWhileAcquirerAwake: a call started while the
// acquirer is awake leaves the watchdog unset, and the acquirer sets it
// before it can block (operator_map_guard.go), so a call that hangs still
// times out at its grant plus the hold timeout, to the instant. On one P
// the acquirer fills the backlog (64 calls queued) from a source whose
// items are all ready, and waits for room; the worker that takes item 1
// wakes it and starts item 1's call in one step, while the acquirer is
// awake. Item 1 hangs. Then the acquirer takes item 65 and blocks on the
// source, still open ("then blocks on the source"), or first waits for
// item 65's token, 100 ms away ("then waits for a token"). Without the
// acquirer's sleepLocked at the end of an item, the first never times out;
// without the one before a grant that is not free, the second times out
// at 100 ms.
func TestThrottleMapHoldTimeoutWhileAcquirerAwake(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		limit rxthrottle.Limit
	}{
		{"then blocks on the source", rxthrottle.Per(1000, time.Second)},
		{"then waits for a token", rxthrottle.Per(64, 100*ms)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 65
				src := make(chan rxgo.Item, n)
				for i := 1; i <= n; i++ {
					src <- rxgo.Of(i)
				}
				start := time.Now()
				var ended atomic.Int64 // item 1's context's end, after start
				fn := func(ctx context.Context, v any) (any, error) {
					if v == 1 {
						<-ctx.Done()
						ended.Store(int64(time.Since(start)))
						return nil, ctx.Err()
					}
					return v, nil
				}
				out := rxthrottle.ThrottleMap(tc.limit, fn, rxthrottle.WithHoldTimeout(50*ms))(
					rxgo.FromChannel(src)).Observe()
				var got []any
				for len(got) < n {
					select {
					case item := <-out:
						if item.E != nil {
							require.ErrorIs(t, item.E, rxthrottle.ErrHoldTimeout)
							got = append(got, "timeout")
							continue
						}
						got = append(got, item.V)
					case <-time.After(time.Minute):
						t.Fatalf("%d items out after a minute: item 1's call never timed out", len(got))
					}
				}
				require.Equal(t, 50*ms, time.Duration(ended.Load()), "item 1's context ends at its grant + the hold timeout")
				require.Equal(t, "timeout", got[0])
				for i := 2; i <= n; i++ {
					require.Equal(t, i, got[i-1])
				}
				close(src)
				for range out {
				}
			})
		})
	}
}

// TestThrottleMapHoldTimeoutAfterAcquirerExit: the acquirer, woken for room
// while the call it has not yet guarded hangs, may end without another
// arming point on its way: the subscription ended meanwhile, and waitRoom
// returns false. Its exit sets the watchdog (sleepLocked in acquire's
// defer), or else the output, which closes once the running calls have
// returned or met their deadline, would wait for a call that ignores its
// context for ever. As in TestThrottleMapHoldTimeoutWhileAcquirerAwake, on
// one P the worker that takes item 1 wakes the acquirer and starts item 1's
// call before the acquirer runs; the call ends the subscription and then
// ignores its context. The output closes at item 1's deadline, its grant
// plus the hold timeout. Without the exit's sleepLocked it never closes
// (when the subscription's end runs before the acquirer, as on one P; when
// the acquirer runs first, as -race's scheduler sometimes has it, the grant
// that is not free sets the watchdog instead).
func TestThrottleMapHoldTimeoutAfterAcquirerExit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ms := time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		const n = 65
		src := make(chan rxgo.Item, n)
		for i := 1; i <= n; i++ {
			src <- rxgo.Of(i)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hung := make(chan struct{}) // item 1's call returns once the test is done
		var ended atomic.Int64      // item 1's context's end, after start
		start := time.Now()
		fn := func(callCtx context.Context, v any) (any, error) {
			if v == 1 {
				cancel()
				<-callCtx.Done() // the subscription's end, which it then ignores
				ended.Store(int64(time.Since(start)))
				<-hung
			}
			return v, nil
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(1000, time.Second), fn, rxthrottle.WithHoldTimeout(50*ms))(
			rxgo.FromChannel(src)).Observe(rxgo.WithContext(ctx))
		closed := make(chan time.Duration)
		go func() {
			for range out {
			}
			closed <- time.Since(start)
		}()
		select {
		case at := <-closed:
			require.Equal(t, 50*ms, at, "the output closes at item 1's grant + the hold timeout")
		case <-time.After(time.Minute):
			close(hung)
			<-closed
			t.Fatal("the output did not close within a minute: item 1's call never met its deadline")
		}
		require.Equal(t, time.Duration(0), time.Duration(ended.Load()), "item 1's context ends with the subscription")
		close(hung)
	})
}
