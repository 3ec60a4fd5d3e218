package redisstore

import (
	"context"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// luaTests has a test for every file of lua/, each of which runs the
// scripts against a test redis-server (EVAL, through go-redis's
// Script.Run): TestLuaFiles runs them, and fails for a file without one.
var luaTests = map[string]func(*testing.T){
	"schedule.lua": testLuaSchedule,
	"batch.lua":    testLuaBatch,
	"admit.lua":    testLuaAdmit,
	"tail.lua":     testLuaTail,
	"lease.lua":    testLuaLease,
	"runs.lua":     testLuaRuns,
	"report.lua":   testLuaReport,
	"end.lua":      testLuaEnd,
	"endonly.lua":  testLuaEndOnly,
	"pause.lua":    testLuaPause,
	"conf.lua":     testLuaConf,
	"guard.lua":    testLuaGuard,

	"retrybudget.lua": testLuaRetryBudget, // retrybudget_test.go
}

// TestLuaFiles runs the test of every file of lua/ (luaTests), and fails
// for a file that has none, or a test of no file.
func TestLuaFiles(t *testing.T) {
	entries, err := fs.ReadDir(luaFiles, "lua")
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
		test, ok := luaTests[e.Name()]
		if !ok {
			t.Errorf("lua/%s has no test in luaTests", e.Name())
			continue
		}
		t.Run(e.Name(), test)
	}
	for name := range luaTests {
		if !slices.Contains(files, name) {
			t.Errorf("luaTests has a test of lua/%s, which is not a file", name)
		}
	}
}

// TestLuaCompose: every file of lua/ composes, with its includes written
// out and its comments and blank lines left out; an include of a missing
// file, and one that makes a cycle, are errors.
func TestLuaCompose(t *testing.T) {
	entries, err := fs.ReadDir(luaFiles, "lua")
	require.NoError(t, err)
	for _, e := range entries {
		src, err := composeLua(luaFiles, e.Name(), nil)
		require.NoError(t, err, e.Name())
		for line := range strings.Lines(src) {
			text := strings.TrimSpace(line)
			require.NotEmpty(t, text, "%s: a blank line", e.Name())
			require.False(t, strings.HasPrefix(text, "--"), "%s: a comment or an include left: %q", e.Name(), line)
		}
	}
	batch, err := composeLua(luaFiles, "batch.lua", nil)
	require.NoError(t, err)
	require.Contains(t, batch, "local SKIPLIST_AT = "+strconv.Itoa(skiplistAt)+"\n", "the Go constants")
	require.Contains(t, batch, "local CONF_BOUND = 500000\n")
	require.Contains(t, batch, "local LEASE_LIVE = 2000000\n")
	require.Contains(t, batch, "local LEASE_LIVE_MS = 2000\n")
	tail, err := composeLua(luaFiles, "tail.lua", nil)
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(batch, tail), "tail.lua, in admit.lua and lease.lua")

	fsys := fstest.MapFS{
		"lua/a.lua":     {Data: []byte("-- a\nlocal x = 1 -- kept\n\n  --#include b.lua\nreturn x\n")},
		"lua/b.lua":     {Data: []byte("  x = x + 1\n")},
		"lua/loop.lua":  {Data: []byte("--#include loop2.lua\n")},
		"lua/loop2.lua": {Data: []byte("--#include loop.lua\n")},
		"lua/gone.lua":  {Data: []byte("--#include nothing.lua\n")},
	}
	src, err := composeLua(fsys, "a.lua", nil)
	require.NoError(t, err)
	require.Equal(t, "local x = 1 -- kept\n  x = x + 1\nreturn x\n", src)
	_, err = composeLua(fsys, "loop.lua", nil)
	require.ErrorContains(t, err, "lua/loop.lua includes itself (through loop.lua, loop2.lua)")
	_, err = composeLua(fsys, "gone.lua", nil)
	require.ErrorContains(t, err, "nothing.lua")
}

// luaRun runs the scripts of lua/ on a test redis-server (a cluster in
// cluster mode: every test's keys share one hash tag).
type luaRun struct {
	t   *testing.T
	srv *redistest.Server
	c   redis.UniversalClient
}

func newLuaRun(t *testing.T) *luaRun {
	t.Helper()
	srv := redistest.Start(t)
	return &luaRun{t: t, srv: srv, c: srv.Client(t)}
}

// eval runs script on keys with args and returns its reply.
func (l *luaRun) eval(script *redis.Script, keys []string, args ...any) any {
	l.t.Helper()
	v, err := script.Run(context.Background(), l.c, keys, args...).Result()
	require.NoError(l.t, err)
	return v
}

// ints runs script and returns its reply, a list of integers.
func (l *luaRun) ints(script *redis.Script, keys []string, args ...any) []int64 {
	l.t.Helper()
	v := l.eval(script, keys, args...)
	var out []int64
	for _, x := range v.([]any) {
		n, ok := x.(int64)
		require.True(l.t, ok, "reply %v", v)
		out = append(out, n)
	}
	return out
}

// now is Redis's TIME in µs.
func (l *luaRun) now() int64 {
	l.t.Helper()
	v, err := l.srv.Do("TIME")
	require.NoError(l.t, err)
	tm := v.([]any)
	s, _ := strconv.ParseInt(tm[0].(string), 10, 64)
	us, _ := strconv.ParseInt(tm[1].(string), 10, 64)
	return s*1e6 + us
}

// zset returns the members of the ZSET key and their scores (the
// sentinels at ±inf as ±2^63-1... left out: see sentinel).
func (l *luaRun) zset(key string) map[string]int64 {
	l.t.Helper()
	v, err := l.srv.Do("ZRANGEBYSCORE", key, "(-inf", "(+inf", "WITHSCORES")
	require.NoError(l.t, err)
	out := map[string]int64{}
	for _, pair := range v.([]any) {
		p := pair.([]any)
		out[p[0].(string)] = int64(p[1].(float64))
	}
	return out
}

// sentinels returns the members of the ZSET key at -inf or +inf.
func (l *luaRun) sentinels(key string) []string {
	l.t.Helper()
	var out []string
	for _, r := range [][2]string{{"-inf", "-inf"}, {"+inf", "+inf"}} {
		v, err := l.srv.Do("ZRANGEBYSCORE", key, r[0], r[1])
		require.NoError(l.t, err)
		for _, m := range v.([]any) {
			out = append(out, m.(string))
		}
	}
	return out
}

// hash returns the fields of the HASH key.
func (l *luaRun) hash(key string) map[string]string {
	l.t.Helper()
	v, err := l.srv.Do("HGETALL", key)
	require.NoError(l.t, err)
	out := map[string]string{}
	for k, x := range v.(map[any]any) {
		out[k.(string)] = x.(string)
	}
	return out
}

// field returns the integer field f of the HASH key.
func (l *luaRun) field(key, f string) int64 {
	l.t.Helper()
	n, err := strconv.ParseInt(l.hash(key)[f], 10, 64)
	require.NoError(l.t, err, "field %s of %s", f, key)
	return n
}

// luaBatch is batch.lua's ARGV, as limitSet.build makes it, for tests
// that spell the operations out.
type luaBatch struct {
	sp, ht int64   // spacing, hold timeout, µs
	limits []int64 // N, W (µs) of each limit
	k      int     // the concurrency cap
	tier   string
	cread  int64 // when the configuration was read, µs (0: fresh)
}

// argv returns batch.lua's ARGV with ops (four arguments each), the
// configuration's version 0, read at b.cread or, if 0, fresh whenever the
// script runs: an hour after Redis's now. The reading is used only to
// answer a configuration read over CONF_BOUND (500 ms) ago as stale, and
// Redis's now read here came before the script's own by a round trip and
// the test's work: on CI's loaded machine that was once over 500 ms, and
// TestLuaFiles/runs.lua, which tests no staleness, got {5, now, 0, 0}
// for an Allow. The tests of staleness set cread.
func (b luaBatch) argv(l *luaRun, ops ...[]any) []any {
	l.t.Helper()
	maxw := b.sp
	for i := 1; i < len(b.limits); i += 2 {
		maxw = max(maxw, b.limits[i])
	}
	read := b.cread
	if read == 0 {
		read = l.now() + 3600e6
	}
	a := []any{len(ops), b.sp, maxw, b.ht, len(b.limits) / 2}
	for _, x := range b.limits {
		a = append(a, x)
	}
	a = append(a, 0, read, b.k, b.tier)
	for _, op := range ops {
		require.Len(l.t, op, 4, "four arguments an operation")
		a = append(a, op...)
	}
	return a
}

// Operations of luaBatch.argv: a Wait, an Allow and an Acquire of n
// tokens, with the time left before a deadline (-1: none).
func opWait(n int, left int64) []any  { return []any{"0", n, -1, left} }
func opAllow(n int) []any             { return []any{"1", n, -1, -1} }
func opAcquire(n int, ht int64) []any { return []any{"0", n, ht, -1} }
func opEnd(how string, id int64, n int, d int64) []any {
	return []any{how, id, n, d}
}

// luaKeys are the keys of a schedule for the tests of lua/, with the
// leaseholders' ZSET.
func luaKeys(tag string) []string {
	return append(scheduleKeys(tag), keyPrefix+tag+suffixLessees)
}

// replies splits batch.lua's reply in its four integers per operation.
func replies(t *testing.T, v []int64) [][4]int64 {
	t.Helper()
	require.Zero(t, len(v)%4, "reply %v", v)
	var out [][4]int64
	for i := 0; i < len(v); i += 4 {
		out = append(out, [4]int64(v[i:i+4]))
	}
	return out
}
