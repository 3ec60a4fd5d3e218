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
