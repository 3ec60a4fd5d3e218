package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestLeaseServes: callers of a leased Bucket are admitted mostly from
// leases, and Close leaves nothing held in Redis.
func TestLeaseServes(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(10000, time.Second), WithLease(0))
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				require.NoError(t, b.Wait(ctx))
			}
		})
	}
	wg.Wait()
	require.NoError(t, b.Close())
	require.Empty(t, scores(t, srv, b.keys[1]), "held after Close")
	st := b.Stats()
	require.EqualValues(t, 800, st.Admitted)
	t.Logf("leased %d of %d admissions", b.Leased(), st.Admitted)
	require.Positive(t, b.Leased())
	require.Len(t, emissions(t, srv, b), 800, "every admission completed in done or runs")
	runs, err := srv.Do("PEXPIRETIME", b.keys[3])
	require.NoError(t, err)
	state, err := srv.Do("PEXPIRETIME", b.keys[2])
	require.NoError(t, err)
	require.Equal(t, state, runs, "runs expire with the state")
}
