package rxthrottle

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"
)

// ThrottleMap reads WithConcurrency: however many tokens the window has,
// at most k calls of fn run at once, each one's place freed the moment it
// returns; every item comes out, in order.
func TestThrottleMapConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const k, items = 2, 12
		var running, most atomic.Int32
		fn := func(_ context.Context, v any) (any, error) {
			in := running.Add(1)
			for m := most.Load(); in > m && !most.CompareAndSwap(m, in); m = most.Load() {
			}
			time.Sleep(10 * time.Millisecond)
			running.Add(-1)
			return v, nil
		}
		vs := make([]any, items)
		for i := range vs {
			vs[i] = i
		}
		start := time.Now()
		out := ThrottleMap(Per(100, time.Second), fn, WithConcurrency(k))(rxgo.Just(vs...)())
		var got []any
		for item := range out.Observe() {
			require.NoError(t, item.E)
			got = append(got, item.V)
		}
		require.Equal(t, vs, got)
		require.Equal(t, int32(k), most.Load(), "calls of fn at once")
		require.Equal(t, items/k*10*time.Millisecond, time.Since(start), "k at a time, back to back")
	})
}
