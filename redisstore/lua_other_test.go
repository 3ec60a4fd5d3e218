package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of lua/end.lua, endonly.lua, pause.lua, conf.lua and
// guard.lua (luaTests).

// testLuaEnd: a release completes the held tokens at now, with a debt
// past n (use:<u>); a cancel removes them; a withdrawal removes a Wait's
// reservation; an end whose departure is not the admission's touches
// nothing.
func testLuaEnd(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-end")
	b := luaBatch{ht: 5e6, limits: []int64{10, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opAcquire(2, 5e6), opAcquire(1, 5e6), opWait(1, -1))...))
	d1, d2, d3 := r[0][1], r[1][1], r[2][1]
	require.Len(t, l.zset(keys[1]), 3, "held")

	r = replies(t, l.ints(batchScript, keys, b.argv(l, opEnd("use:3", 1, 2, d1+1), opEnd("use:3", 1, 2, d1), opEnd("cancel", 2, 1, d2), opEnd("withdraw", 3, 1, d3))...))
	now := r[0][1]
	require.Equal(t, [][4]int64{{0, now, 0, 0}, {2, now, 0, 0}, {1, now, 0, 0}, {1, now, 0, 0}}, r)
	require.Empty(t, l.zset(keys[1]))
	require.Equal(t, map[string]int64{"1": now, "1.2": now, "1.d1": now}, l.zset(keys[0]), "released now with a debt of 1; the cancel and the withdrawal left nothing")

	// Through endonly.lua: a release completes at now, and the state's m
	// follows.
	r = replies(t, l.ints(batchScript, keys, b.argv(l, opAcquire(1, 5e6))...))
	r = replies(t, l.ints(endScript, keys, b.argv(l, opEnd("release", r[0][3], 1, r[0][1]))...))
	require.Equal(t, int64(1), r[0][0])
	require.Equal(t, r[0][1], l.zset(keys[0])["4"])
	require.Equal(t, r[0][1], l.field(keys[2], "m"))
}

// testLuaEndOnly: a batch of ends on a schedule whose state is gone ends
// nothing and makes no key; a release on a schedule whose done is gone
// ends the hold and records it in m, but does not make done again
// without its sentinel (the next batch.lua does, with a pause).
func testLuaEndOnly(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-endonly")
	b := luaBatch{ht: 5e6, limits: []int64{10, 1e6}}
	r := replies(t, l.ints(endScript, keys, b.argv(l, opEnd("release", 1, 1, 5), opReportOf(2, 5, "1,1,0,0"))...))
	require.Equal(t, [][4]int64{{0, r[0][1], 0, 0}, {0, r[0][1], 0, 0}}, r)
	for _, k := range keys {
		v, err := l.srv.Do("EXISTS", k)
		require.NoError(t, err)
		require.Equal(t, int64(0), v, k)
	}

	r = replies(t, l.ints(batchScript, keys, b.argv(l, opAcquire(1, 5e6))...))
	_, err := l.srv.Do("DEL", keys[0])
	require.NoError(t, err)
	r = replies(t, l.ints(endScript, keys, b.argv(l, opEnd("release", r[0][3], 1, r[0][1]))...))
	require.Equal(t, int64(1), r[0][0])
	require.Empty(t, l.zset(keys[1]))
	v, err := l.srv.Do("EXISTS", keys[0])
	require.NoError(t, err)
	require.Equal(t, int64(0), v, "done is not made again here")
	require.Equal(t, r[0][1], l.field(keys[2], "m"))
}

// testLuaPause: a pause holds admissions back until it ends on Redis's
// clock, is never shortened, and keeps the keys until it ends.
func testLuaPause(t *testing.T) {
	l := newLuaRun(t)
	keys := luaKeys("lua-pause")
	before := l.now()
	require.Equal(t, int64(1), l.eval(pauseScript, keys, 10e6, 1e6))
	p := l.field(keys[2], "p")
	require.GreaterOrEqual(t, p, before+10e6)
	require.LessOrEqual(t, p, l.now()+10e6)
	require.Equal(t, int64(0), l.eval(pauseScript, keys, 5e6, 1e6), "not shortened")
	require.Equal(t, p, l.field(keys[2], "p"))
	require.Greater(t, l.field(keys[2], "x")*1000, p, "the keys outlive the pause")

	b := luaBatch{ht: 5e6, limits: []int64{10, 1e6}}
	r := replies(t, l.ints(batchScript, keys, b.argv(l, opWait(1, -1), opAllow(1))...))
	require.Equal(t, [][4]int64{{1, p, r[0][2], 1}, {0, p, r[1][2], 0}}, r)
}

// testLuaConf: the first read stores the configuration sent; a later one
// returns the stored one; "set" stores a new version and raises the
// schedule's c.
func testLuaConf(t *testing.T) {
	l := newLuaRun(t)
	keys := []string{keyPrefix + "lua-conf" + suffixConf, keyPrefix + "lua-conf" + suffixState}
	v := l.eval(confScript, keys, "join", "5/1000000", 0, 1000, 0).([]any)
	ver := v[0].(int64)
	require.Equal(t, []any{ver, "5/1000000", "0", "1000", "0", v[5]}, v)
	require.GreaterOrEqual(t, v[5].(int64), ver, "the version: Redis's now at the write")
	v = l.eval(confScript, keys, "join", "7/1000000", 10, 2000, 1).([]any)
	require.Equal(t, []any{ver, "5/1000000", "0", "1000", "0"}, v[:5], "the stored one")

	_, err := l.srv.Do("HSET", keys[1], "s", 1)
	require.NoError(t, err)
	v = l.eval(confScript, keys, "set", "7/1000000", 10, 2000, 1).([]any)
	require.Greater(t, v[0].(int64), ver)
	require.Equal(t, []any{"7/1000000", "10", "2000", "1"}, v[1:5])
	require.Equal(t, v[0], l.field(keys[1], "c"))
	require.Equal(t, map[string]string{"v": l.hash(keys[0])["v"], "l": "7/1000000", "s": "10", "h": "2000", "k": "1"}, l.hash(keys[0]))
}

// testLuaGuard: guard.Store's rules at the caller's time: counted up to
// the limit, then blocked for the block (or to the window's end, if
// later), refused while blocked, and a new window once the block ends.
func testLuaGuard(t *testing.T) {
	l := newLuaRun(t)
	key := []string{keyPrefix + "lua-guard" + suffixGuard}
	hit := func(s int64) []int64 { return l.ints(guardScript, key, 2, 1, 0, 5, 0, s, 0) }
	require.Equal(t, []int64{1, 0, 1, 1, 0}, hit(1000), "a window of 1s starts")
	require.Equal(t, []int64{1, 0, 2, 1, 0}, hit(1000))
	require.Equal(t, []int64{0, 1, 3, 5, 0}, hit(1000), "over the limit: blocked for 5s")
	require.Equal(t, []int64{0, 0, 3, 2, 0}, hit(1003), "refused while blocked")
	require.Equal(t, []int64{1, 0, 1, 1, 0}, hit(1005), "the block ended: a new window")

	// A window of 100ms at the caller's time: the key lives a second of
	// Redis's time, not 100ms (the caller's clock need not run with it).
	short := []string{keyPrefix + "lua-guard-short" + suffixGuard}
	require.Equal(t, []int64{1, 0, 1, 0, 1e8}, l.ints(guardScript, short, 2, 0, 1e8, 5, 0, 1000, 0))
	v, err := l.srv.Do("PTTL", short[0])
	require.NoError(t, err)
	require.Greater(t, v.(int64), int64(500))
}
