package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// allows counts how many Allow calls in a row succeed on b, up to max.
func allows(t *testing.T, b *Bucket, max int) int {
	t.Helper()
	for i := range max {
		ok, err := b.Allow(context.Background())
		require.NoError(t, err)
		if !ok {
			return i
		}
	}
	return max
}

// TestReleaseN (SPEC.md, "Cost known after the call"): a hold of n tokens
// released as having used u renews u of them a window after the release
// and gives the others back at once; beyond n, the extra count as
// departures at the release (a debt); ReleaseN(0) is Cancel; a hold that
// has ended records nothing and says so.
func TestReleaseN(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		n, used    int
		freeAfter  int // Allow calls that succeed after the release, of 4
		completion int // completions recorded
	}{
		{"used less", 3, 1, 3, 1},
		{"used all", 3, 3, 1, 3},
		{"used none", 3, 0, 4, 0},
		{"a debt", 1, 3, 1, 3},
		{"a debt beyond N", 1, 1000, 0, 5}, // the debt recorded stops at N: the window is full either way
	} {
		t.Run(c.name, func(t *testing.T) {
			b, srv := newTestBucket(t, rxthrottle.Per(4, time.Hour))
			tok, err := b.AcquireN(ctx, c.n)
			require.NoError(t, err)
			require.NoError(t, tok.ReleaseN(c.used))
			require.Len(t, emissions(t, srv, b), c.completion)
			require.Equal(t, c.freeAfter, allows(t, b, 4))
			require.Equal(t, []int64{}, scores(t, srv, b.keys[1]), "nothing held")
			require.ErrorIs(t, tok.ReleaseN(1), rxthrottle.ErrTokenEnded)
		})
	}
	t.Run("after the lease deadline", func(t *testing.T) {
		b, _ := newTestBucket(t, rxthrottle.Per(4, time.Hour), WithHoldTimeout(time.Millisecond))
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		time.Sleep(10 * time.Millisecond)
		require.ErrorIs(t, tok.ReleaseN(3), rxthrottle.ErrTokenEnded, "the lease ended the hold: no debt")
		require.Equal(t, 3, allows(t, b, 4), "the expired token counts, nothing more")
	})
}
