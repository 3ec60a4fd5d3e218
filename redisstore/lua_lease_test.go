package redisstore

import (
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
	require.Equal(t, map[string]int64{"1": now + 5e6, "1.2": now + 5e6, "1.3": now + 5e6, "1.4": now + 5e6}, l.zset(keys[1]))
	require.Equal(t, []string{doneSentinel}, l.sentinels(keys[1]), "held is a skiplist")
	require.Contains(t, l.zset(keys[3]), "a", "a leaseholder")

	// 6 free now (4 held); then none.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opLeaseOf(10, "a"), opLeaseOf(1, "a"))...))
	require.Equal(t, [][4]int64{{6, r[0][1], 6, 2}, {6, r[0][1], 0, 0}}, r)

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
// stamp (clamped to now), with their debt, and removes those given back;
// a run already reported, or of another lease, changes nothing.
func testLuaReport(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-report")
	b := luaBatch{ht: 5e6, limits: []int64{10, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opLeaseOf(4, "a"))...))
	id, d := r[0][3], r[0][1]
	require.Equal(t, int64(4), r[0][2])

	// Tokens 1 and 2 used at d+5 with a debt of 1, token 3 given back,
	// token 4 used at a stamp past Redis's now (clamped to now).
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opReportOf(id, d, "1,2,5,1 3,1,-1,0 4,1,9000000000,0"))...))
	now := r[0][1]
	require.Equal(t, [4]int64{4, now, 0, 0}, r[0], "4 tokens ended")
	require.Empty(t, l.zset(keys[1]), "nothing held")
	require.Equal(t, map[string]int64{"1": d + 5, "1.2": d + 5, "1.d1": d + 5, "1.4": now}, l.zset(keys[0]))

	// Again, and of a lease that is not: nothing.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opReportOf(id, d, "1,2,5,1"), opReportOf(id+1, d, "1,1,5,0"))...))
	require.Equal(t, int64(0), r[0][0])
	require.Equal(t, int64(0), r[1][0])
	require.Len(t, l.zset(keys[0]), 4)

	// A report in a batch of ends only (endonly.lua) does the same.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opLeaseOf(2, "a"))...))
	id, d = r[0][3], r[0][1]
	r = replies(t, l.ints(endScript, keys, b.argv(l, opReportOf(id, d, "1,2,0,0"))...))
	require.Equal(t, int64(2), r[0][0])
	require.Empty(t, l.zset(keys[1]))
	require.Equal(t, d, l.zset(keys[0])["2.2"])
}
