package rxthrottle_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// The operators hold their items' tokens as untimed holds, not as Tokens
// (operator_hold.go says why): these tests pin what would change if they
// went through Acquire and Release. The hold timeout is
// TestThrottleChanSlowerThanHoldTimeout's, the spacing
// TestPropertyThrottleWithSpacingMatchesSpec's.

// TestOperatorItemExemptFromQueueBound: with the queue bound reached, an
// Acquire is refused (ErrQueueFull) but an operator's item queues and goes
// in its turn, behind the caller already waiting.
func TestOperatorItemExemptFromQueueBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := time.Second
		b := mustBucket(t, rxthrottle.Per(1, w), rxthrottle.WithMaxQueue(1))
		ctx := context.Background()
		start := time.Now()
		require.True(t, rxthrottle.AllowNow(b))
		waited := make(chan time.Duration, 1)
		go func() {
			if err := b.Wait(ctx); err == nil {
				waited <- time.Since(start)
			}
		}()
		synctest.Wait() // it waits: the queue is full
		_, err := b.Acquire(ctx)
		require.ErrorIs(t, err, rxthrottle.ErrQueueFull)

		out, errf := rxthrottle.ThrottleChan(ctx, b, chanOf(1))
		require.Equal(t, 1, <-out)
		require.Equal(t, 2*w, time.Since(start), "the item goes a window after the waiter")
		require.Equal(t, w, <-waited)
		_, open := <-out
		require.False(t, open)
		require.NoError(t, errf())
	})
}

// TestOperatorItemsOutsideConcurrencyCap: a Token holds WithConcurrency's
// only place, and an operator's items still go at once, each holding its
// token until delivered; Stats.Held counts the Token's alone.
func TestOperatorItemsOutsideConcurrencyCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := time.Second
		b := mustBucket(t, rxthrottle.Per(3, w), rxthrottle.WithConcurrency(1))
		ctx := context.Background()
		start := time.Now()
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		capped, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		_, err = b.Acquire(capped)
		require.ErrorIs(t, err, context.DeadlineExceeded, "the cap's one place is the Token's")

		out, errf := rxthrottle.ThrottleChan(ctx, b, chanOf(1, 2))
		require.Equal(t, 1, <-out)
		require.Equal(t, 2, <-out)
		require.Equal(t, time.Millisecond, time.Since(start), "both items go at once, the Token held")
		_, open := <-out
		require.False(t, open)
		require.NoError(t, errf())
		st := b.Stats()
		require.Equal(t, 1, st.Held, "the Token's token")
		require.Equal(t, 0, st.Free, "the items' tokens are spent, not held")
		tok.Release()
	})
}
