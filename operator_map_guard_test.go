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
				src := readyItems(n)
				start := time.Now()
				// item 1's context's end, after start: sent by its call, which
				// may still be running when its timeout is out (the
				// watchdog emits it), so the test waits for it.
				ended := make(chan time.Duration, 1)
				fn := func(ctx context.Context, v any) (any, error) {
					if v == 1 {
						<-ctx.Done()
						ended <- time.Since(start)
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
				require.Equal(t, 50*ms, <-ended, "item 1's context ends at its grant + the hold timeout")
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
		src := readyItems(n)
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

// TestThrottleMapReleasesWhileAcquirerAwake: a call that returns a value
// while the acquirer is awake leaves its token to the acquirer, which
// releases it at its next sleepLocked, before it can block
// (operator_map_guard.go); so the tokens still renew W after the calls
// returned, to the instant, and none is held longer. On one P the
// acquirer takes a token for each of 64 items, the backlog, and waits for
// room; the worker that takes item 1 wakes it and runs all 64 calls before
// it runs again, so every one of them returns while it is awake. Item 65's
// token is then free at once, the 64 being within the limit, and the
// acquirer releases theirs at the end of item 65's section; or it is not,
// and it releases them before it waits for it. Each item's call starts at
// its departure, (i-1)/N windows in. Without the acquirer's release the
// items after the first N wait for the hold timeout (a minute).
func TestThrottleMapReleasesWhileAcquirerAwake(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const window = 100 * time.Millisecond
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"item 65's token free at once", 100},
		{"item 65 waits for its token", 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const items = 200
				src := readyItems(items)
				close(src) // all of them there: the acquirer fills the backlog at once
				bucket, err := rxthrottle.NewBucket(rxthrottle.Per(tc.n, window))
				require.NoError(t, err)
				start := time.Now()
				var called [items + 1]time.Duration
				fn := func(_ context.Context, v any) (any, error) {
					called[v.(int)] = time.Since(start) // one call at a time: one P, each returns at once
					return v, nil
				}
				got := 0
				for item := range rxthrottle.ThrottleMapWith(bucket, fn)(rxgo.FromChannel(src)).Observe() {
					require.NoError(t, item.E)
					got++
					require.Equal(t, got, item.V)
				}
				require.Equal(t, items, got)
				for i := 1; i <= items; i++ {
					require.Equal(t, time.Duration((i-1)/tc.n)*window, called[i], "item %d's call", i)
				}
				s := bucket.Stats()
				require.Equal(t, 0, s.Held)
				require.Equal(t, uint64(items), s.Released)
				require.Equal(t, time.Duration(0), s.TotalHold, "every call returned at its departure")
			})
		})
	}
}

// readyItems returns a source with the items 1 to n in its buffer.
func readyItems(n int) chan rxgo.Item {
	src := make(chan rxgo.Item, n)
	for i := 1; i <= n; i++ {
		src <- rxgo.Of(i)
	}
	return src
}
