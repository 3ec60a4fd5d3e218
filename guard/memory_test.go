package guard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/guard/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newMemoryStore(t *testing.T, maxKeys int) *guard.MemoryStore {
	t.Helper()
	s, err := guard.NewMemoryStore(maxKeys)
	require.NoError(t, err)
	return s
}

func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) guard.Store { return newMemoryStore(t, 0) })
}

func TestMemoryStoreConformanceWithMaxKeys(t *testing.T) {
	// A bound well above what the suite uses must not change any result.
	storetest.Run(t, func(t *testing.T) guard.Store { return newMemoryStore(t, 3) })
}

func TestNewMemoryStoreNegative(t *testing.T) {
	_, err := guard.NewMemoryStore(-1)
	require.EqualError(t, err, "guard: NewMemoryStore(-1): the maximum number of keys must not be negative")
}

// keysAt hits nothing; it reports the store's key counts at offset at.
func keysAt(s *guard.MemoryStore, at time.Duration) [2]int {
	live, blocked := s.Keys(storetest.T0().Add(at))
	return [2]int{live, blocked}
}

func TestMemoryStoreKeysAndExactEviction(t *testing.T) {
	p := guard.Policy{Limit: rxthrottle.Per(1, 10*time.Second), Block: 30 * time.Second}
	s := newMemoryStore(t, 0)
	hit := func(at time.Duration, key string) guard.Result {
		t.Helper()
		r, err := s.Hit(context.Background(), key, p, storetest.T0().Add(at))
		require.NoError(t, err)
		return r
	}
	hit(0, "a")
	hit(1*time.Second, "b")
	hit(2*time.Second, "b") // blocks b until 32 s
	steps := []struct {
		at   time.Duration
		want [2]int
	}{
		{2 * time.Second, [2]int{2, 1}},
		{10*time.Second - 1, [2]int{2, 1}},
		{10 * time.Second, [2]int{1, 1}}, // a's window ends
		{32*time.Second - 1, [2]int{1, 1}},
		{32 * time.Second, [2]int{0, 0}}, // b's block ends
	}
	for i, st := range steps {
		got := keysAt(s, st.at)
		assert.Equal(t, st.want, got, "step %d: Keys at %v = %v, want %v", i, st.at, got, st.want)
	}
}

func TestMemoryStoreHitEvictsExpiredKeys(t *testing.T) {
	// Without any Keys call, Hits alone keep the number of stored keys
	// bounded by the live ones plus a shrinking backlog.
	p := guard.Policy{Limit: rxthrottle.Per(1, time.Second)}
	s := newMemoryStore(t, 0)
	const n = 1000
	for i := range n {
		_, err := s.Hit(context.Background(), fmt.Sprint("old", i), p, storetest.T0())
		require.NoError(t, err)
	}
	// Every old key has expired by now; each Hit of a new key adds one
	// and evicts several, so n Hits clear the backlog.
	later := storetest.T0().Add(time.Hour)
	for i := range n {
		_, err := s.Hit(context.Background(), fmt.Sprint("new", i), p, later)
		require.NoError(t, err)
	}
	live, _ := s.Keys(later)
	require.Equal(t, n, live, "only the new keys are live")
}

func TestMemoryStoreMaxKeys(t *testing.T) {
	p := guard.Policy{Limit: rxthrottle.Per(1, 10*time.Second), Block: time.Minute}
	s := newMemoryStore(t, 2)
	ctx := context.Background()
	hit := func(at time.Duration, key string) error {
		_, err := s.Hit(ctx, key, p, storetest.T0().Add(at))
		return err
	}
	require.NoError(t, hit(0, "a"))
	require.NoError(t, hit(1*time.Second, "b"))
	require.NoError(t, hit(2*time.Second, "b")) // b blocked until 62 s
	require.NoError(t, hit(3*time.Second, "a"), "a known key is always served")

	err := hit(4*time.Second, "c")
	require.ErrorIs(t, err, rxthrottle.ErrTooManyKeys)
	require.EqualError(t, err, `guard: too many keys: key "c" would be number 3 of at most 2, and none has expired`)

	// a's block (from 3 s) ends at 63 s, b's at 62 s: one slot frees then.
	require.ErrorIs(t, hit(62*time.Second-1, "c"), rxthrottle.ErrTooManyKeys)
	require.NoError(t, hit(62*time.Second, "c"))
	require.ErrorIs(t, hit(62*time.Second, "d"), rxthrottle.ErrTooManyKeys)
}

func TestMemoryStoreFreshAtEndBehindEvictionBacklog(t *testing.T) {
	// More expired keys than one Hit sweeps end before "a" does, so "a"
	// is still stored when it is hit at the exact end of its block: it
	// must be fresh all the same.
	p := guard.Policy{Limit: rxthrottle.Per(1, time.Second), Block: 10 * time.Second}
	s := newMemoryStore(t, 0)
	ctx := context.Background()
	for i := range 20 {
		_, err := s.Hit(ctx, fmt.Sprint("old", i), p, storetest.T0())
		require.NoError(t, err)
	}
	storetest.RunSteps(t, s, p, []storetest.Step{
		{At: 0, Key: "a", Want: guard.Result{Allowed: true, Count: 1, Reset: time.Second}},
		{At: 0, Key: "a", Want: guard.Result{Blocked: true, Count: 2, Reset: 10 * time.Second}},
		{At: 10 * time.Second, Key: "a", Want: guard.Result{Allowed: true, Count: 1, Reset: time.Second}},
		{At: 10 * time.Second, Key: "a", Want: guard.Result{Blocked: true, Count: 2, Reset: 10 * time.Second}},
	})
	live, blocked := s.Keys(storetest.T0().Add(10 * time.Second))
	require.Equal(t, [2]int{1, 1}, [2]int{live, blocked})
}
