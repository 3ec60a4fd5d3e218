package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// TestDoneBecomesASkiplist: a schedule's done ZSET stays a listpack (the
// small encoding) while it holds up to skiplistAt completions, and
// becomes a skiplist, its sentinel swapped for doneSentinel, in the batch
// that makes it hold more; it then stays one, with one sentinel, and admissions
// go on exactly (a listpack makes every ZADD scan and move the whole
// set: scripts.go).
func TestDoneBecomesASkiplist(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1000, time.Hour))
	ctx := context.Background()
	at := skiplistAt
	encoding := func() string {
		t.Helper()
		v, err := srv.Do("OBJECT", "ENCODING", b.keys[0])
		require.NoError(t, err)
		return v.(string)
	}
	sentinels := func() []any {
		t.Helper()
		v, err := srv.Do("ZRANGEBYSCORE", b.keys[0], "-inf", "-inf")
		require.NoError(t, err)
		return v.([]any)
	}
	batch := func(k int) {
		t.Helper()
		reqs, out := make([]request, k), make([]admission, k)
		for i := range reqs {
			reqs[i] = request{n: 1}
		}
		require.NoError(t, b.s.runBatch(ctx, b.keys, reqs, out))
		for _, a := range out {
			require.True(t, a.admitted, "%+v", a)
		}
	}

	batch(at - 4)
	batch(4)
	require.Equal(t, "listpack", encoding(), "with %d completions", at)
	require.Equal(t, []any{"_"}, sentinels())

	batch(1) // makes it hold more
	require.Equal(t, "skiplist", encoding())
	require.Equal(t, []any{doneSentinel}, sentinels(), "one sentinel, the long one")
	v, err := srv.Do("HGET", b.keys[2], "k")
	require.NoError(t, err)
	require.Equal(t, "1", v)

	require.NoError(t, b.Wait(ctx))
	require.Len(t, emissions(t, srv, b), at+2, "every admission recorded once")
	require.Equal(t, []any{doneSentinel}, sentinels())
	require.Equal(t, "skiplist", encoding())
}

// TestDoneSkiplistStaysWhenTrimmed: lookups in done bind exactly once it
// is a skiplist, and it stays one when its old completions are dropped
// and it holds few again (Redis does not convert a ZSET back).
func TestDoneSkiplistStaysWhenTrimmed(t *testing.T) {
	// A window long enough that no stall of a loaded machine between the
	// burst and the next admissions passes it.
	limit := rxthrottle.Per(40, 500*time.Millisecond)
	b, srv := newTestBucket(t, limit)
	ctx := context.Background()
	run := func(k int) []admission {
		t.Helper()
		reqs, out := make([]request, k), make([]admission, k)
		for i := range reqs {
			reqs[i] = request{n: 1}
		}
		require.NoError(t, b.s.runBatch(ctx, b.keys, reqs, out))
		return out
	}
	first := run(40) // all at once: a burst of N
	e1 := first[0].e
	for _, a := range first {
		require.Equal(t, e1, a.e)
	}
	// The 41st and 42nd wait for the first tokens, e_i = e_(i-N) + W, found
	// by a lookup in done: the 41st's before done becomes a skiplist (in
	// its batch), the 42nd's after. A machine that stalls for a window
	// between the burst and them makes them go at their arrival, which is
	// the formula too (and leaves the lookup untested this once).
	next := func() {
		t.Helper()
		a := run(1)[0]
		require.Equal(t, max(e1+micros(limit.Window), a.now), a.e)
	}
	next()
	enc := func() any {
		v, err := srv.Do("OBJECT", "ENCODING", b.keys[0])
		require.NoError(t, err)
		return v
	}
	require.Equal(t, "skiplist", enc())
	next()

	// A window later, 16 more admissions pass a multiple of 16 ids and
	// drop the completions a window old.
	time.Sleep(2 * limit.Window)
	run(16)
	require.Less(t, len(emissions(t, srv, b)), 20, "done was trimmed")
	require.Equal(t, "skiplist", enc())
}
