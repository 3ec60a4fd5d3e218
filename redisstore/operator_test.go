package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// TestThrottleWithRedisBucket: the rxgo operator takes the Redis bucket
// unchanged (it is an rxthrottle.Limiter); every item goes once, in order,
// on the shared schedule.
func TestThrottleWithRedisBucket(t *testing.T) {
	limit := rxthrottle.Per(3, 30*time.Millisecond)
	b, _ := newTestBucket(t, limit)
	var got []admission
	b.s.trace = func(a admission) { got = append(got, a) }

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := rxthrottle.ThrottleWith(b)(rxgo.Just(1, 2, 3, 4, 5, 6, 7)())
	var items []any
	for item := range obs.Observe(rxgo.WithContext(ctx)) {
		require.NoError(t, item.E)
		items = append(items, item.V)
	}
	require.Equal(t, []any{1, 2, 3, 4, 5, 6, 7}, items)
	require.Len(t, got, 7)
	arrivals, es := make([]int64, len(got)), make([]int64, len(got))
	for i, a := range got {
		arrivals[i], es[i] = a.now, a.e
	}
	require.Equal(t, spec(arrivals, 0, []rxthrottle.Limit{limit}), es)
	require.LessOrEqual(t, maxInWindow(es, micros(limit.Window)), limit.N)
}
