package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/attempt"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// testLuaRetryBudget (luaTests): ten first attempts let one retry of a
// budget of 10% plus 0 go, not a second; once the window has passed, the
// first attempts no longer count.
func testLuaRetryBudget(t *testing.T) {
	l := newLuaRun(t)
	keys := []string{keyPrefix + "lua-rb" + suffixBudgetFirsts, keyPrefix + "lua-rb" + suffixBudgetRetries, keyPrefix + "lua-rb" + suffixBudgetSeq}
	const w = 200e3 // µs
	for range 10 {
		require.Equal(t, int64(1), l.eval(retryBudgetScript, keys, "f", w, "0.1", 0))
	}
	require.Equal(t, int64(1), l.eval(retryBudgetScript, keys, "r", w, "0.1", 0), "1 <= 0.1 x 10")
	require.Equal(t, int64(0), l.eval(retryBudgetScript, keys, "r", w, "0.1", 0), "2 > 0.1 x 10: not recorded")
	require.Len(t, l.zset(keys[1]), 1)
	time.Sleep(250 * time.Millisecond)
	require.Equal(t, int64(0), l.eval(retryBudgetScript, keys, "r", w, "0.1", 0), "the first attempts left the window")
	require.Equal(t, int64(1), l.eval(retryBudgetScript, keys, "r", w, "0.1", 1), "the minimum")
}

// The retry budget of a shared Bucket binds every process: two Buckets
// of one name (two processes) count against one budget, of 0% plus 2 over
// a window of an hour: two retries in all, not two each; a Bucket of
// another name has its own.
func TestRetryBudgetAcrossBuckets(t *testing.T) {
	srv := redistest.Start(t)
	limit := rxthrottle.Per(100, time.Hour)
	var counters []attempt.Counter
	for _, name := range []string{"rb", "rb", "rb-other"} {
		b, err := NewBucket(srv.Client(t), name, limit)
		require.NoError(t, err)
		p := attempt.Default()
		attempt.WithRetryBudget(0, 2)(&p)
		require.NoError(t, p.Check())
		counters = append(counters, p.BudgetFor(b, func() time.Duration { return time.Hour }))
	}
	now := time.Now()
	require.True(t, counters[0].Retry(now))
	require.True(t, counters[1].Retry(now), "the second of the shared two")
	require.False(t, counters[0].Retry(now), "over the budget, in either process")
	require.False(t, counters[1].Retry(now))
	require.True(t, counters[2].Retry(now), "another bucket's budget")
}
