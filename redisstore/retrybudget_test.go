package redisstore

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/attempt"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// testLuaRetryBudget (luaTests): ten first attempts and a budget of 10%
// plus 1: a retry goes, a second at once does not (the window from the
// first retry on would hold two retries and no first attempt); ten more
// first attempts make room for it. Once the window has passed, nothing
// before counts; with a minimum of 0, a retry with no first attempt at its
// instant never goes.
func testLuaRetryBudget(t *testing.T) {
	l := newLuaRun(t)
	keys := []string{keyPrefix + "lua-rb" + suffixBudgetCounts, keyPrefix + "lua-rb" + suffixBudgetStarts}
	const w = 200e3 // µs
	run := func(op string, min int) int64 {
		t.Helper()
		v := l.ints(retryBudgetScript, keys, op, w, "0.1", min)
		require.Len(t, v, 2)
		require.InDelta(t, l.now(), v[1], 1e6, "the instant counted, on Redis's clock")
		return v[0]
	}
	for range 10 {
		require.Equal(t, int64(1), run("f", 1))
	}
	require.Equal(t, int64(1), run("r", 1), "1 <= 0.1 x 0 + 1 from its instant on")
	require.Equal(t, int64(0), run("r", 1), "2 > 0.1 x 0 + 1 from the first retry on: not counted")
	for range 10 {
		require.Equal(t, int64(1), run("f", 1))
	}
	require.Equal(t, int64(1), run("r", 1), "2 <= 0.1 x 10 + 1 from the first retry on")
	counts, err := l.srv.Do("HMGET", keys[0], "f", "r")
	require.NoError(t, err)
	require.Equal(t, []any{"20", "2"}, counts)
	time.Sleep(250 * time.Millisecond)
	require.Equal(t, int64(0), run("r", 0), "the first attempts left the window")
	require.Equal(t, int64(1), run("r", 1), "the minimum")
}

// TestRetryBudgetEveryWindowRedis (SPEC.md, "Retry budget") on a real
// redis-server: two Buckets of one name (two processes) count first
// attempts and retries at random real instants against a random budget,
// over a window of 100 ms. On Redis's clock (the instants the script
// counted at), no window [s, s+W) holds more retries than ratio x its first
// attempts + min, and each retry is taken exactly when the rule admits it
// from the admissions before it (specmodel).
func TestRetryBudgetEveryWindowRedis(t *testing.T) {
	srv := redistest.Start(t)
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 27))
	spec := attempt.RetryBudget{Ratio: []float64{0, 0.1, 0.25, 0.5, 1}[rng.IntN(5)], Min: 1 + rng.IntN(3)}
	const w = 100 * time.Millisecond
	pRetry := 0.1 + 0.5*rng.Float64()
	t.Logf("seed %d: budget %v x + %d, %.0f%% retries asked", seed, spec.Ratio, spec.Min, 100*pRetry)
	var counters []*redisBudget
	for range 2 {
		b, err := NewBucket(srv.Client(t), "rb-windows", rxthrottle.Per(100, w), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		counters = append(counters, b.RetryBudget(spec).(*redisBudget))
	}
	var counted []specmodel.BudgetEvent
	var t0 int64
	taken, refused := 0, 0
	for i := range 300 {
		if rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.IntN(8)) * time.Millisecond)
		}
		retry := rng.Float64() < pRetry
		op := map[bool]string{false: "f", true: "r"}[retry]
		ok, at, err := counters[rng.IntN(2)].run(op)
		require.NoError(t, err)
		if i == 0 {
			t0 = at
		}
		e := specmodel.BudgetEvent{At: time.Duration(at-t0) * time.Microsecond, Retry: retry}
		if retry {
			if want := specmodel.BudgetAdmits(counted, e.At, w, spec.Ratio, spec.Min); ok != want {
				t.Fatalf("retry at %v: taken %v, the rule says %v", e.At, ok, want)
			}
			if !ok {
				refused++
				continue
			}
			taken++
		}
		counted = append(counted, e)
	}
	require.NoError(t, specmodel.BudgetWindows(counted, w, spec.Ratio, spec.Min))
	t.Logf("%d retries taken, %d refused, of 300 counts", taken, refused)
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
		b, err := NewBucket(srv.Client(t), name, limit, WithTimeout(suiteTimeout))
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
