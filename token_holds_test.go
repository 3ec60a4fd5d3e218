package rxthrottle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHoldLogReclaimsEndedFront: with tokens always out, released oldest
// first (requests in flight), the log of holds never empties, so its
// ended front must be reclaimed as the oldest live hold moves on, or it
// grows by one hold per Acquire for as long as the bucket is busy.
func TestHoldLogReclaimsEndedFront(t *testing.T) {
	b, err := NewBucket(Per(10, time.Nanosecond))
	require.NoError(t, err)
	ctx := context.Background()
	var held [4]Token
	for i := range held {
		held[i], err = b.Acquire(ctx)
		require.NoError(t, err)
	}
	for i := range 10000 {
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		held[i%len(held)].Release()
		held[i%len(held)] = tok
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Equal(t, len(held), b.holds.live)
	require.LessOrEqual(t, len(b.holds.items), 2*33+len(held), "the log keeps %d holds for %d live", len(b.holds.items), b.holds.live)
}
