package rxthrottle_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestKeyedConcurrencyCapPerKey: Keyed.ConcurrencyCap reports each key's
// adaptive cap as it has moved, and ForKey's Stats show it: the key of a
// server with a knee at 2 ends with a smaller cap than the key of one with
// a knee at 16. A key not kept reports the starting cap and is not made.
func TestKeyedConcurrencyCapPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := rxthrottle.NewKeyed(rxthrottle.Per(100000, time.Second), rxthrottle.WithAdaptiveConcurrency(1, 32))
		require.NoError(t, err)
		require.Equal(t, 1, k.ConcurrencyCap("small"), "a key not seen starts at min")
		require.Zero(t, k.Stats().KeysLive, "asking for a key's cap makes no key")
		servers := map[string]*kneeServer{"small": {knee: 2}, "large": {knee: 16}}
		start := time.Now()
		var wg sync.WaitGroup
		for key, srv := range servers {
			for range 40 {
				wg.Go(func() {
					for time.Since(start) < 2*time.Second {
						tok, err := k.Acquire(context.Background(), key)
						require.NoError(t, err)
						srv.call()
						tok.Release()
					}
				})
			}
		}
		wg.Wait()
		small, large := k.ConcurrencyCap("small"), k.ConcurrencyCap("large")
		t.Logf("caps: small %d, large %d; most in flight: small %d, large %d", small, large, servers["small"].max, servers["large"].max)
		require.GreaterOrEqual(t, small, 1)
		require.LessOrEqual(t, large, 32)
		require.Less(t, small, large, "each key's own cap")
		require.GreaterOrEqual(t, large, 8, "the large server's key grew")
		require.Equal(t, small, rxthrottle.ForKey(k, "small").Stats().ConcurrencyCap)
		require.Equal(t, large, rxthrottle.ForKey(k, "large").Stats().ConcurrencyCap)
		require.Zero(t, k.Stats().ConcurrencyCap, "over all keys there is no one cap")
		require.Equal(t, 1, k.ConcurrencyCap("unseen"))
		require.Equal(t, 2, k.Stats().KeysLive)
	})
}

// TestKeyedConcurrencyCapFixed: with WithConcurrency every key reports
// its cap, without a cap 0, and an empty key 0.
func TestKeyedConcurrencyCapFixed(t *testing.T) {
	fixed, err := rxthrottle.NewKeyed(rxthrottle.Per(10, time.Second), rxthrottle.WithConcurrency(3))
	require.NoError(t, err)
	require.NoError(t, fixed.Wait(context.Background(), "a"))
	require.Equal(t, 3, fixed.ConcurrencyCap("a"))
	require.Equal(t, 3, fixed.ConcurrencyCap("b"))
	require.Equal(t, 3, rxthrottle.ForKey(fixed, "a").Stats().ConcurrencyCap)
	require.Zero(t, fixed.ConcurrencyCap(""))
	none, err := rxthrottle.NewKeyed(rxthrottle.Per(10, time.Second))
	require.NoError(t, err)
	require.NoError(t, none.Wait(context.Background(), "a"))
	require.Zero(t, none.ConcurrencyCap("a"))
	require.Zero(t, rxthrottle.ForKey(none, "a").Stats().ConcurrencyCap)
}
