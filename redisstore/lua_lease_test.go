package redisstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of lua/lease.lua and report.lua (luaTests).

// opLeaseOf and opReportOf are a lease's operations of batch.lua.
func opLeaseOf(want int, holder string) []any { return []any{opLease, want, holder, 0} }
func opReportOf(id, d int64, runs string) []any {
	return []any{opReport, id, d, runs}
}

// testLuaLease: a lease grants the tokens free now, held with the lease's
// deadline, at most the smallest N over the leaseholders, and none behind
// a reservation of any process.
func testLuaLease(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-lease")
	b := luaBatch{ht: 5e6, limits: []int64{10, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opLeaseOf(4, "a"))...))
	now := r[0][1]
	require.Equal(t, [4]int64{6, now, 4, 1}, r[0])
	require.Equal(t, map[string]int64{"1:4": now + 5e6}, l.zset(keys[1]), "one member, with its count")
	require.Equal(t, int64(3), l.field(keys[2], "e"), "the held tokens beyond one a member")
	require.Contains(t, l.zset(keys[4]), "a", "a leaseholder")

	// 6 free now (4 held); then none.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opLeaseOf(10, "a"), opLeaseOf(1, "a"))...))
	require.Equal(t, [][4]int64{{6, r[0][1], 6, 2}, {6, r[0][1], 0, 0}}, r)
	require.Equal(t, int64(8), l.field(keys[2], "e"))

	// Per(10, 1s): 4 tokens used (in runs) and 1 Wait (in done) in the
	// window: 5 free now.
	uk := luaKeys("lua-lease-used")
	r = replies(t, l.ints(batchScript, uk, b.argv(l, opLeaseOf(4, "a"), opWait(1, -1))...))
	r = replies(t, l.ints(batchScript, uk, b.argv(l, opReportOf(r[0][3], r[0][1], "1,4,0,0"), opLeaseOf(10, "a"))...))
	require.Equal(t, int64(4), r[0][0])
	require.Equal(t, int64(5), r[1][2], "the runs count in the window")

	// Two leaseholders: at most 10/2 each.
	sk := luaKeys("lua-lease-share")
	l.ints(batchScript, sk, b.argv(l, opLeaseOf(1, "a"))...)
	r = replies(t, l.ints(batchScript, sk, b.argv(l, opLeaseOf(10, "b"))...))
	require.Equal(t, int64(5), r[0][2])

	// Per(2, 1s): a Wait reserved a window ahead, the two before it
	// withdrawn: a token is free now, but no lease overtakes the
	// reservation.
	rk := luaKeys("lua-lease-behind")
	two := luaBatch{ht: 5e6, limits: []int64{2, 1e6}}
	r = replies(t, l.ints(batchScript, rk, two.argv(l, opWait(1, -1), opWait(1, -1), opWait(1, -1))...))
	require.Equal(t, int64(1e6), r[2][2])
	r = replies(t, l.ints(batchScript, rk, two.argv(l, opEnd("withdraw", 1, 1, r[0][1]), opEnd("withdraw", 2, 1, r[1][1]), opLeaseOf(1, "a"))...))
	require.Equal(t, [2]int64{1, 1}, [2]int64{r[0][0], r[1][0]}, "withdrawn")
	require.Equal(t, [4]int64{6, r[2][1], 0, 0}, r[2], "no lease past a reservation ahead")

	// Stale: nothing granted.
	old := b
	old.cread = l.now() - micros(confBound) - 1000
	r = replies(t, l.ints(batchScript, keys, old.argv(l, opLeaseOf(1, "a"))...))
	require.Equal(t, int64(5), r[0][0])
}

// testLuaReport: a report completes the runs of tokens used at their
// stamp (clamped to now), with their debt, as one member of runs each,
// and gives back those it returns; the lease's member counts down, and
// goes with its last token; a lease already reported, or not held,
// changes nothing.
func testLuaReport(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-report")
	b := luaBatch{ht: 5e6, limits: []int64{10, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opLeaseOf(4, "a"))...))
	id, d := r[0][3], r[0][1]
	require.Equal(t, int64(4), r[0][2])

	// Token 2 used at d+5: the lease holds 3.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opReportOf(id, d, "2,1,5,0"))...))
	require.Equal(t, int64(1), r[0][0])
	require.Equal(t, map[string]int64{"1:3": d + 5e6}, l.zset(keys[1]))
	require.Equal(t, map[string]int64{"1:2:1": d + 5}, l.zset(keys[3]))
	require.Equal(t, int64(2), l.field(keys[2], "e"))

	// Token 1 used at d+7 with a debt of 2, token 3 given back, token 4
	// used at a stamp past Redis's now (clamped to now).
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opReportOf(id, d, "1,1,7,2 3,1,-1,0 4,1,9000000000,0"))...))
	now := r[0][1]
	require.Equal(t, [4]int64{3, now, 0, 0}, r[0], "3 tokens ended")
	require.Empty(t, l.zset(keys[1]), "nothing held")
	require.Equal(t, map[string]int64{"1:2:1": d + 5, "1:1:3": d + 7, "1:4:1": now}, l.zset(keys[3]))
	require.Empty(t, l.zset(keys[0]), "nothing in done")
	st := l.hash(keys[2])
	require.Equal(t, "0", st["e"])
	require.Equal(t, "5", st["r"], "5 tokens in runs")

	// Again, and of a lease that is not: nothing.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opReportOf(id, d, "1,2,5,1"), opReportOf(id+1, d, "1,1,5,0"))...))
	require.Equal(t, int64(0), r[0][0])
	require.Equal(t, int64(0), r[1][0])
	require.Len(t, l.zset(keys[3]), 3)

	// A report in a batch of ends only (endonly.lua) does the same.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opLeaseOf(2, "a"))...))
	id, d = r[0][3], r[0][1]
	r = replies(t, l.ints(endScript, keys, b.argv(l, opReportOf(id, d, "1,2,0,0"))...))
	require.Equal(t, int64(2), r[0][0])
	require.Empty(t, l.zset(keys[1]))
	require.Equal(t, d, l.zset(keys[3])["2:1:2"])
	require.Equal(t, int64(7), l.field(keys[2], "r"))
}

// testLuaRuns: the k-th latest completion over done and runs together,
// against a sorted list of every token: on random schedules of Waits'
// completions (some still ahead) and runs of leased tokens (some at the
// same instants), for every N, an Allow is told it would go at the
// (N-1)-th latest completion plus the window, and a Wait whose deadline
// has come is refused at the (N-1)-th latest of those already past plus
// the window (its floor), having reserved nothing.
func testLuaRuns(t *testing.T) {
	l := newLuaRun(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const w = 100e6 // every completion binds
	for trial := range 6 {
		keys := luaKeys(fmt.Sprintf("lua-runs-%d", trial))
		now := l.now()
		var all, past []int64 // every token's completion, and those before now
		var done, runs []any
		id, rw := 0, 0
		at := func() int64 { return now - 1 - rng.Int64N(10e6) }
		for range 20 + rng.IntN(20) {
			id++
			c := at()
			if rng.IntN(4) == 0 {
				c = now + 50e6 // a reservation ahead
			}
			done = append(done, c, strconv.Itoa(id))
			all = append(all, c)
			if c < now {
				past = append(past, c)
			}
		}
		for range 5 + rng.IntN(10) {
			id++
			c := at()
			switch rng.IntN(3) {
			case 0: // a tie with a Wait's
				if c = done[2*rng.IntN(len(done)/2)].(int64); c > now {
					c = at()
				}
			case 1: // a tie with another run's
				if len(runs) > 0 {
					c = runs[2*rng.IntN(len(runs)/2)].(int64)
				}
			}
			n := 1 + rng.IntN(20)
			runs = append(runs, c, fmt.Sprintf("%d:1:%d", id, n))
			rw += n
			for range n {
				all, past = append(all, c), append(past, c)
			}
		}
		_, err := l.srv.Do(append([]any{"ZADD", keys[0], "-inf", "_"}, done...)...)
		require.NoError(t, err)
		_, err = l.srv.Do(append([]any{"ZADD", keys[3]}, runs...)...)
		require.NoError(t, err)
		_, err = l.srv.Do("ZADD", keys[1], "+inf", "_")
		require.NoError(t, err)
		latest := slices.Max(all)
		_, err = l.srv.Do("HSET", keys[2], "s", id, "l", latest, "m", latest, "r", rw)
		require.NoError(t, err)
		slices.Sort(all)
		slices.Sort(past)
		for n := 1; n <= len(all); n++ {
			b := luaBatch{ht: 5e6, limits: []int64{int64(n), w}}
			r := replies(t, l.ints(batchScript, keys, b.argv(l, opAllow(1), opWait(1, 0))...))
			want := all[len(all)-n] + w
			require.Equal(t, [2]int64{0, want}, [2]int64{r[0][0], r[0][1]}, "trial %d, N = %d: the Allow", trial, n)
			floor := r[1][1] - r[1][2] // now
			if n <= len(past) {
				floor = past[len(past)-n] + w
			}
			require.Equal(t, [2]int64{4, floor}, [2]int64{r[1][0], r[1][1]}, "trial %d, N = %d: the Wait refused", trial, n)
		}
		require.Len(t, l.zset(keys[0]), len(done)/2, "nothing recorded")
	}
}

// opProbe is a lease pool's probe of a waiter's deadline (lease_probe.go).
func opProbe(n int, left int64) []any { return []any{"2", n, -1, left} }

// testLuaProbe (of admit.lua): on Per(2, 1s), behind two departures at
// now, a probe with a deadline 1ms away is refused (the earliest it could
// go is a window after now) and one of 1.5s is told its departure; neither
// reserves anything nor holds back the Wait after them, which takes the
// next id.
func testLuaProbe(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-probe")
	b := luaBatch{ht: 5e6, limits: []int64{2, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opWait(1, -1), opWait(1, -1), opProbe(1, 1000), opProbe(1, 1500000), opWait(1, -1))...))
	now := r[0][1]
	require.Equal(t, [][4]int64{{1, now, 0, 1}, {1, now, 0, 2}, {4, now + 1e6, 1e6, 0}, {0, now + 1e6, 1e6, 0}, {1, now + 1e6, 1e6, 3}}, r)
	require.Len(t, l.zset(keys[0]), 3, "the probes recorded nothing")
}
