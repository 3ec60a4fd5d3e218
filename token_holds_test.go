package rxthrottle

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"

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

// TestAcquireHoldStartsAtItsOwnReading is why Acquire's hot path reads the
// clock (BENCHMARKS.md, "Issue 30's speed targets on a quiet machine"): a
// token free at the bucket's last reading is free now too, but its hold
// must start at a reading of its own (SPEC.md, "On the real clock"), since
// the hold timeout runs from there (SPEC.md, "Held tokens"), and so does
// ThrottleMap's deadline for fn. Here the last reading is an hour old when
// a token free then is acquired: a hold started at it would be timed out
// at once, its token back W after that, and a caller of both tokens would
// go at once, not W after the hold's timeout; fn would be out of time
// before it starts.
func TestAcquireHoldStartsAtItsOwnReading(t *testing.T) {
	ms := time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b, err := NewBucket(Per(2, 10*ms), WithHoldTimeout(5*ms))
		require.NoError(t, err)
		ctx := context.Background()
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		tok.Release() // at 0, the bucket's last reading: one token back at 10 ms, one free
		time.Sleep(time.Hour)
		_, err = b.Acquire(ctx) // at 1 h, never released: times out at 1 h + 5 ms
		require.NoError(t, err)
		require.NoError(t, b.WaitN(ctx, 2))
		require.Equal(t, time.Hour+15*ms, time.Since(start), "a caller of both tokens goes W after the hold's timeout")
	})
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(1, 10*ms), WithHoldTimeout(5*ms))
		require.NoError(t, err)
		time.Sleep(time.Hour) // the bucket's last reading is its base
		fn := func(ctx context.Context, v any) (any, error) {
			time.Sleep(ms)
			return v, ctx.Err()
		}
		for item := range ThrottleMapWith(b, fn)(rxgo.Just(1)()).Observe() {
			require.NoError(t, item.E, "fn's deadline is 5 ms after its own grant")
			require.Equal(t, 1, item.V)
		}
	})
}
