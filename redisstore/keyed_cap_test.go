package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestKeyedConcurrencyCapPerKey: Keyed.ConcurrencyCap reports each key's
// adaptive cap in this process, and rxthrottle.ForKey's Stats show it: a
// key whose holds grew its cap (on a clock that does not move every
// latency is the least) reports more than min, a key not used reports min;
// with WithConcurrency every key reports the fixed cap, as Bucket's Stats
// do, and without a cap 0.
func TestKeyedConcurrencyCapPerKey(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	k, err := NewKeyed(rdb, "capk", rxthrottle.Per(100000, time.Second),
		rxthrottle.WithAdaptiveConcurrency(1, 8), rxthrottle.WithClock(clock.NewMock()), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 1, k.ConcurrencyCap("busy"), "it starts at min")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 30 {
				tok, err := k.Acquire(context.Background(), "busy")
				require.NoError(t, err)
				time.Sleep(100 * time.Microsecond)
				tok.Release()
			}
		})
	}
	wg.Wait()
	busy := k.ConcurrencyCap("busy")
	require.Greater(t, busy, 1)
	require.LessOrEqual(t, busy, 8)
	require.Equal(t, busy, rxthrottle.ForKey(k, "busy").Stats().ConcurrencyCap)
	require.Equal(t, 1, k.ConcurrencyCap("idle"))
	require.Equal(t, 1, rxthrottle.ForKey(k, "idle").Stats().ConcurrencyCap)

	fixed, err := NewKeyed(rdb, "capkfixed", rxthrottle.Per(10, time.Second), rxthrottle.WithConcurrency(3), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 3, fixed.ConcurrencyCap("a"))
	b, err := NewBucket(rdb, "capbfixed", rxthrottle.Per(10, time.Second), rxthrottle.WithConcurrency(3), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 3, b.Stats().ConcurrencyCap)
	none, err := NewKeyed(rdb, "capknone", rxthrottle.Per(10, time.Second), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Zero(t, none.ConcurrencyCap("a"))
}
