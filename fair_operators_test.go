package rxthrottle_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// Fair shares (SPEC.md, "Fair shares") through the Keyed limiter and
// ThrottleMap, on virtual time.

// TestFairKeyedSharesAKey: on one key of a Keyed limiter, tenant B's two
// calls, after A's six, alternate with A's.
func TestFairKeyedSharesAKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
		require.NoError(t, err)
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		for _, tenant := range []string{"A", "A", "A", "A", "A", "A", "B", "B"} {
			wg.Go(func() {
				require.NoError(t, k.Wait(rxthrottle.WithTenant(context.Background(), tenant, 1), "api"))
				mu.Lock()
				order = append(order, tenant)
				mu.Unlock()
			})
			synctest.Wait()
		}
		wg.Wait()
		require.Equal(t, []string{"A", "A", "B", "A", "B", "A", "A", "A"}, order)
	})
}

// TestFairThrottleMapStreams: five ThrottleMap streams share a Bucket,
// four of tenant A and one of B (the tenants of their Observe contexts):
// while B has items, it gets half of each window, not the fifth that
// FIFO would give each stream.
func TestFairThrottleMapStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b, err := rxthrottle.NewBucket(rxthrottle.Per(2, time.Second))
		require.NoError(t, err)
		var mu sync.Mutex
		calls := map[string][]time.Duration{}
		fn := func(_ context.Context, v any) (any, error) {
			mu.Lock()
			calls[v.(string)] = append(calls[v.(string)], time.Since(start))
			mu.Unlock()
			return v, nil
		}
		stream := func(tenant string, n int) <-chan rxgo.Item {
			items := make([]any, n)
			for i := range items {
				items[i] = tenant
			}
			ctx := rxthrottle.WithTenant(context.Background(), tenant, 1)
			return rxthrottle.ThrottleMapWith(b, fn)(rxgo.Just(items...)()).Observe(rxgo.WithContext(ctx))
		}
		outs := []<-chan rxgo.Item{stream("B", 10)}
		for range 4 {
			outs = append(outs, stream("A", 10))
		}
		var wg sync.WaitGroup
		for _, out := range outs {
			wg.Go(func() {
				for item := range out {
					require.NoError(t, item.E)
				}
			})
		}
		wg.Wait()
		perWindow := map[time.Duration]int{}
		for _, at := range calls["B"] {
			perWindow[at.Truncate(time.Second)]++
		}
		for w := time.Second; w < 9*time.Second; w += time.Second {
			require.Equal(t, 1, perWindow[w], "B's calls in the window at %v (all: %v)", w, calls["B"])
		}
	})
}
