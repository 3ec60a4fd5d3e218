package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestBlockedCallersFairShares: the callers of one process blocked by a
// held token go by their tenants' fair shares (rxthrottle.WithTenant;
// SPEC.md, "Fair shares"), each tenant's in arrival order, as those of
// rxthrottle.Bucket do: B's two callers, in line after A's four,
// alternate with A's instead of going last.
func TestBlockedCallersFairShares(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(1, 200*time.Millisecond), WithPollInterval(time.Hour))
	tok, err := b.Acquire(context.Background())
	require.NoError(t, err)
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for i, name := range []string{"a0", "a1", "a2", "a3", "b0", "b1"} {
		ctx := rxthrottle.WithTenant(context.Background(), name[:1], 1)
		wg.Go(func() {
			require.NoError(t, b.Wait(ctx))
			mu.Lock()
			got = append(got, name)
			mu.Unlock()
		})
		require.Eventually(t, func() bool { return lineLen(b) == i+1 }, 30*time.Second, time.Millisecond, "%s is in line", name)
	}
	tok.Release()
	wg.Wait()
	// rxthrottle.Bucket's order for the same callers: a0 is served
	// first (its tenant charged), then the finishes: b0 1, a1 2, b1 2
	// (after a1, which arrived first), a2 3, a3 4. The line hands a0
	// the token; the others, given departures a window apart when
	// they ask, keep the fair queue's order among the callers waiting
	// for the window (fair.go).
	require.Equal(t, []string{"a0", "b0", "a1", "b1", "a2", "a3"}, got)
	require.Zero(t, lineLen(b))
}
