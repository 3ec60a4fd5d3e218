package redisstore

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of lua/schedule.lua, batch.lua, admit.lua and tail.lua
// (luaTests). Times are µs on Redis's clock; a reply's now is its d less
// its delay.

// testLuaSchedule: init makes a fresh schedule's keys with their
// sentinels and one expiry; a state hash lost on its own takes its ids
// and times on from the ZSETs left; zadd adds more pairs than one call
// takes.
func testLuaSchedule(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-schedule")
	b := luaBatch{ht: 1e6, limits: []int64{3000, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opWait(1, -1))...))
	require.Equal(t, int64(1), r[0][0])
	now := r[0][1] - r[0][2]
	require.Equal(t, []string{"_"}, l.sentinels(keys[0]))
	require.Equal(t, []string{"_"}, l.sentinels(keys[1]))
	require.Equal(t, map[string]int64{"1": r[0][1]}, l.zset(keys[0]))
	st := l.hash(keys[2])
	require.Equal(t, "1", st["s"])
	x := l.field(keys[2], "x")
	require.Greater(t, x*1000, now+1e6, "the expiry: past the departure plus the window")
	for _, k := range keys[:3] {
		v, err := l.srv.Do("PEXPIRETIME", k)
		require.NoError(t, err)
		require.Equal(t, x, v, "%s expires with the others", k)
	}

	// 2,500 tokens at once: 2,500 score-member pairs, in three ZADDs.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opWait(2500, -1))...))
	require.Equal(t, [4]int64{1, r[0][1], 0, 2}, r[0])
	done := l.zset(keys[0])
	require.Len(t, done, 2501)
	require.Contains(t, done, "2.2500")

	// The state lost on its own: the ids go on from the largest left
	// (2), the times from the scores (the window still counts them).
	_, err := l.srv.Do("DEL", keys[2])
	require.NoError(t, err)
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opWait(500, -1), opWait(1, -1))...))
	require.Equal(t, int64(3), r[0][3], "the ids go on")
	require.Equal(t, int64(4), r[1][3])
	require.Equal(t, now+1e6, r[0][1], "the 3,001st token departs a window after the first")

	// With leases: the counts of leased tokens (e, r) come back from
	// the members of held and runs, and m from the latest of done's and
	// runs'.
	lk := luaKeys("lua-schedule-lease")
	lb := luaBatch{ht: 5e6, limits: []int64{10, 1e6}}
	r = replies(t, l.ints(batchScript, lk, lb.argv(l, opLeaseOf(5, "a"))...))
	l.ints(batchScript, lk, lb.argv(l, opReportOf(r[0][3], r[0][1], "1,2,0,1"))...)
	used := l.zset(lk[3])["1:1:3"]
	require.NotZero(t, used)
	_, err = l.srv.Do("DEL", lk[2])
	require.NoError(t, err)
	r = replies(t, l.ints(batchScript, lk, lb.argv(l, opLeaseOf(10, "a"))...))
	require.Equal(t, [4]int64{6, r[0][1], 4, 2}, r[0], "3 held, 3 in runs: 4 free; the ids go on")
	st = l.hash(lk[2])
	require.Equal(t, "5", st["e"], "2 tokens beyond the first of lease 1, 3 of lease 2")
	require.Equal(t, "3", st["r"])
	require.Equal(t, strconv.FormatInt(used, 10), st["m"])
}

// testLuaBatch: a batch runs its operations in order, the later ones
// scheduled behind the earlier; an admission under a configuration read
// more than CONF_BOUND ago is stale, and one under other limits than the
// key's recorded tier is a mismatch, and neither admits anything; an
// expired hold completes at its deadline.
func testLuaBatch(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-batch")
	b := luaBatch{ht: 1000, limits: []int64{2, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opWait(1, -1), opWait(1, -1), opWait(1, -1))...))
	now := r[0][1] - r[0][2]
	require.Equal(t, [][4]int64{{1, now, 0, 1}, {1, now, 0, 2}, {1, now + 1e6, 1e6, 3}}, r)

	old := b
	old.cread = l.now() - micros(confBound) - 1000
	r = replies(t, l.ints(batchScript, keys, old.argv(l, opWait(1, -1))...))
	require.Equal(t, int64(5), r[0][0], "stale")
	require.Len(t, l.zset(keys[0]), 3, "nothing admitted")

	// A key's tier: the first batch records it; other limits under the
	// same version are answered with the recorded ones.
	tk := luaKeys("lua-batch-tier")
	tiered := b
	tiered.tier = "2/1000000"
	l.ints(batchScript, tk, tiered.argv(l, opWait(1, -1))...)
	require.Equal(t, "2/1000000", l.hash(tk[2])["t"])
	other := b
	other.limits, other.tier = []int64{5, 1e6}, "5/1000000"
	v := l.eval(batchScript, tk, other.argv(l, opWait(1, -1))...).([]any)
	require.Equal(t, []any{int64(7), "2/1000000", int64(0), int64(0)}, v)
	require.Len(t, l.zset(tk[0]), 1, "nothing admitted")

	// An Acquire held 1ms: the next batch, after its deadline, finds it
	// complete at the deadline.
	hk := luaKeys("lua-batch-held")
	r = replies(t, l.ints(batchScript, hk, b.argv(l, opAcquire(1, 1000))...))
	require.Equal(t, int64(1), r[0][0])
	due := r[0][1] + 1000
	require.Equal(t, map[string]int64{"1": due}, l.zset(hk[1]))
	for l.now() <= due {
	}
	l.ints(batchScript, hk, b.argv(l, opAllow(1))...)
	require.Empty(t, l.zset(hk[1]))
	require.Equal(t, due, l.zset(hk[0])["1"], "completed at its deadline")

	// A lease past its deadline: the tokens it still holds complete at
	// the deadline, as one run.
	lk := luaKeys("lua-batch-lease")
	r = replies(t, l.ints(batchScript, lk, b.argv(l, opLeaseOf(2, "a"))...))
	due = r[0][1] + 1000
	for l.now() <= due {
	}
	l.ints(batchScript, lk, b.argv(l, opAllow(1))...)
	require.Empty(t, l.zset(lk[1]))
	require.Equal(t, map[string]int64{"1:0:2": due}, l.zset(lk[3]))
	require.Equal(t, map[string]string{"e": "0", "r": "2"}, map[string]string{"e": l.hash(lk[2])["e"], "r": l.hash(lk[2])["r"]})

	// Runs lost on their own: the schedule is paused until every token
	// they held has renewed (m plus the window).
	_, err := l.srv.Do("DEL", lk[3])
	require.NoError(t, err)
	m := l.field(lk[2], "m")
	r = replies(t, l.ints(batchScript, lk, b.argv(l, opWait(1, -1))...))
	require.Equal(t, m+1e6, r[0][1], "paused until m + W")
	require.Equal(t, "0", l.hash(lk[2])["r"])

	// Runs a window old go, and their tokens with them, when the ids pass
	// a multiple of 16.
	pk := luaKeys("lua-batch-prune")
	short := luaBatch{ht: 5e6, limits: []int64{100, 1000}}
	r = replies(t, l.ints(batchScript, pk, short.argv(l, opLeaseOf(3, "a"))...))
	l.ints(batchScript, pk, short.argv(l, opReportOf(r[0][3], r[0][1], "1,3,0,0"))...)
	require.Equal(t, int64(3), l.field(pk[2], "r"))
	for end := l.now() + 2000; l.now() <= end; {
	}
	var waits [][]any
	for range 15 {
		waits = append(waits, opWait(1, -1))
	}
	l.ints(batchScript, pk, short.argv(l, waits...)...)
	require.Equal(t, int64(0), l.field(pk[2], "r"))
	gone, err := l.srv.Do("EXISTS", pk[3])
	require.NoError(t, err)
	require.Equal(t, int64(0), gone)
}

// testLuaAdmit: the departure under two limits; an Allow that would wait
// records nothing; held tokens block a caller; a deadline before the
// earliest instant is refused, one before the departure only is late; a
// concurrency cap blocks the Acquire past it; the spacing.
func testLuaAdmit(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-admit")
	b := luaBatch{ht: 5e6, limits: []int64{2, 1e6, 3, 10e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opWait(1, -1), opWait(1, -1), opWait(1, -1), opWait(1, -1), opAllow(1))...))
	now := r[0][1] - r[0][2]
	require.Equal(t, [][4]int64{{1, now, 0, 1}, {1, now, 0, 2}, {1, now + 1e6, 1e6, 3}, {1, now + 10e6, 10e6, 4}, {0, now + 10e6, 10e6, 0}}, r)
	require.Len(t, l.zset(keys[0]), 4, "the Allow recorded nothing")

	// Per(1, 1s): a held token blocks the next caller until its lease
	// deadline; with a deadline 1ms away it is refused (it could go at
	// the earliest a window after now: the held token counts as
	// completed now).
	hk := luaKeys("lua-admit-held")
	b = luaBatch{ht: 5e6, limits: []int64{1, 1e6}}
	r = replies(t, l.ints(batchScript, hk, b.argv(l, opAcquire(1, 5e6), opWait(1, -1))...))
	now = r[0][1] - r[0][2]
	require.Equal(t, [][4]int64{{1, now, 0, 1}, {2, now + 5e6, 5e6, 0}}, r)
	r = replies(t, l.ints(batchScript, hk, b.argv(l, opWait(1, 1000))...))
	require.Equal(t, int64(4), r[0][0], "refused")
	require.Equal(t, r[0][1]-r[0][2]+1e6, r[0][1], "b: now plus the window")

	// Per(1, 1s): a caller behind a reservation that could be withdrawn,
	// with a deadline between the floor and its departure, is late.
	lk := luaKeys("lua-admit-late")
	r = replies(t, l.ints(batchScript, lk, b.argv(l, opWait(1, -1), opWait(1, -1), opWait(1, 1500000))...))
	now = r[0][1] - r[0][2]
	require.Equal(t, [][4]int64{{1, now, 0, 1}, {1, now + 1e6, 1e6, 2}, {3, now + 2e6, 2e6, 0}}, r)

	// A concurrency cap of 1: the second Acquire is blocked by the first.
	ck := luaKeys("lua-admit-cap")
	capped := luaBatch{ht: 5e6, limits: []int64{10, 1e6}, k: 1}
	r = replies(t, l.ints(batchScript, ck, capped.argv(l, opAcquire(1, 5e6), opAcquire(1, 5e6))...))
	require.Equal(t, int64(1), r[0][0])
	require.Equal(t, [4]int64{2, r[0][1] + 5e6, r[1][2], 0}, r[1])

	// A spacing of 100ms.
	sk := luaKeys("lua-admit-spacing")
	spaced := luaBatch{sp: 1e5, ht: 5e6, limits: []int64{10, 1e6}}
	r = replies(t, l.ints(batchScript, sk, spaced.argv(l, opWait(1, -1), opWait(1, -1))...))
	require.Equal(t, r[0][1]+1e5, r[1][1])

	testLuaProbe(t) // a lease pool's probe of a deadline (lua_lease_test.go)
}

// testLuaTail: with a spacing, an admission after a withdrawal counts
// from the latest live departure, not from the withdrawn one: with none
// left later than now, from now.
func testLuaTail(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-tail")
	b := luaBatch{sp: 1e6, ht: 5e6, limits: []int64{100, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opWait(1, -1), opWait(1, -1))...))
	require.Equal(t, r[0][1]+1e6, r[1][1])
	d2 := r[1][1]
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opEnd("withdraw", 2, 1, d2), opWait(1, -1))...))
	require.Equal(t, int64(1), r[0][0], "withdrawn")
	now := r[1][1] - r[1][2]
	require.Equal(t, now+1e6, r[1][1], "spaced from now, not from the withdrawn %d", d2)

	// The latest live departure may be a held token's: its lease
	// deadline less the hold timeout.
	hk := luaKeys("lua-tail-held")
	r = replies(t, l.ints(batchScript, hk, b.argv(l, opWait(1, -1), opAcquire(1, 5e6), opWait(1, -1))...))
	d2 = r[1][1]
	r = replies(t, l.ints(batchScript, hk, b.argv(l, opEnd("withdraw", 3, 1, r[2][1]), opWait(1, -1))...))
	require.Equal(t, d2+1e6, r[1][1], "spaced from the held token's departure")
}
