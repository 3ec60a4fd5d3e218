package redisstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestThrottleWithRedisBucket: the rxgo operator takes the Redis bucket
// unchanged (it is an rxthrottle.Limiter); every item goes once, in order,
// on the shared schedule. Each item holds its token until the downstream
// has it (a Token of Acquire), so a token renews a window after that
// release, at Redis's clock: no departure is earlier than the formula
// over departures alone says, and the window holds.
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
	for i, e := range spec(arrivals, 0, []rxthrottle.Limit{limit}) {
		require.GreaterOrEqual(t, es[i], e, "item %d departed before its token renewed", i+1)
	}
	require.LessOrEqual(t, maxInWindow(es, micros(limit.Window)), limit.N)
}

// TestThrottleByWithRedisKeyed: ThrottleBy over the Redis Keyed limiter
// (any rxthrottle.KeyedLimiter): each key keeps its own quota and order,
// nothing is lost, and one key's wait does not hold up the other's items.
func TestThrottleByWithRedisKeyed(t *testing.T) {
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "users", rxthrottle.Per(2, 300*time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	type job struct{ user, name string }
	src := rxgo.Just(job{"a", "a1"}, job{"a", "a2"}, job{"a", "a3"}, job{"b", "b1"}, job{"b", "b2"})()
	start := time.Now()
	var got []string
	var late time.Duration
	for item := range rxthrottle.ThrottleByWith(k, func(v any) string { return v.(job).user })(src).Observe() {
		require.NoError(t, item.E)
		j := item.V.(job)
		got = append(got, j.name)
		if j.name == "a3" {
			late = time.Since(start)
		}
	}
	// Across keys, tokens granted together come in either order.
	require.Len(t, got, 5)
	require.Equal(t, "a3", got[4], "a3 waits for a's window; b's items do not wait behind it: %v", got)
	require.Less(t, slices.Index(got, "a1"), slices.Index(got, "a2"), "a's order: %v", got)
	require.Less(t, slices.Index(got, "b1"), slices.Index(got, "b2"), "b's order: %v", got)
	require.GreaterOrEqual(t, late, 300*time.Millisecond, "a3 went before a1's token renewed")
}
