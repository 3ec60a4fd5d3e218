package guard_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
)

// Issue 17, item 5: the default store is bounded, and when it is full a
// new key is refused (uncounted, told when there will be room) while the
// live keys keep their state.

func TestWithMaxKeysRefusesNewKeysWhenFull(t *testing.T) {
	g, mock := newGuard(t, policy30, guard.WithMaxKeys(2))
	ctx := context.Background()
	_, err := g.Check(ctx, "a")
	require.NoError(t, err)
	mock.Add(10 * time.Second)
	_, err = g.Check(ctx, "b")
	require.NoError(t, err)

	d, err := g.Check(ctx, "c")
	require.ErrorIs(t, err, guard.ErrLimited)
	require.ErrorIs(t, err, rxthrottle.ErrTooManyKeys)
	var le *guard.LimitedError
	require.True(t, errors.As(err, &le))
	assert.Equal(t, `guard: key "c" is refused, the store is full: retry in 50s: too many keys: key "c" would be number 3 of at most 2, and none has expired`, err.Error())
	assert.Equal(t, guard.Decision{Limit: policy30.Limit, RetryAfter: 50 * time.Second, Reset: 50 * time.Second, ResetAt: mock.Now().Add(50 * time.Second)}, d,
		"room when a's window ends, 50 s from now")
	st := g.Stats()
	assert.Equal(t, uint64(1), st.Full)
	assert.Equal(t, uint64(1), st.Refused)
	assert.Zero(t, st.Errors)
	assert.Equal(t, 2, st.KeysLive, "c is counted nowhere")

	// The live keys keep their windows: a and b go on counting.
	for range 29 {
		_, err = g.Check(ctx, "a")
		require.NoError(t, err)
	}
	_, err = g.Check(ctx, "a")
	require.ErrorIs(t, err, guard.ErrLimited, "a's 31st request in its window: its count was kept")
	require.NotErrorIs(t, err, rxthrottle.ErrTooManyKeys)

	// a is blocked for 5 minutes; b's window ends 60 s after its first
	// request, which makes room for c.
	mock.Add(60 * time.Second)
	_, err = g.Check(ctx, "c")
	require.NoError(t, err, "b's window ended: room for c")
}

func TestDefaultStoreIsBounded(t *testing.T) {
	// The flood: 300,000 new keys in one window grew the heap by
	// 43 MB with no bound. The default store keeps DefaultMaxKeys keys and
	// refuses the next new ones; what it holds is measured after a
	// collection, so nothing here depends on time.
	if testing.Short() {
		t.Skip("fills the default store")
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	g, _ := newGuard(t, policy30)
	ctx := context.Background()
	const extra = 10_000
	var refused int
	for i := range guard.DefaultMaxKeys + extra {
		_, err := g.Check(ctx, "2001:db8:"+strconv.Itoa(i)+"::/64")
		switch {
		case errors.Is(err, rxthrottle.ErrTooManyKeys):
			require.ErrorIs(t, err, guard.ErrLimited)
			refused++
		case err != nil:
			require.NoError(t, err)
		}
	}
	after := heap()
	grown := after - min(before, after)
	t.Logf("%d keys tried, %d refused, heap grew by %.1f MB (%.0f B a live key)",
		guard.DefaultMaxKeys+extra, refused, float64(grown)/1e6, float64(grown)/guard.DefaultMaxKeys)
	assert.Equal(t, extra, refused)
	assert.Equal(t, guard.DefaultMaxKeys, g.Stats().KeysLive)
	assert.Less(t, grown, uint64(40<<20), "the store's memory is bounded by its maximum of keys")
	runtime.KeepAlive(g)

	// WithMaxKeys(0) lifts the bound: its store is NewMemoryStore(0).
	unbounded, _ := newGuard(t, policy30, guard.WithMaxKeys(0))
	_, err := unbounded.Check(ctx, "a")
	require.NoError(t, err)
}
