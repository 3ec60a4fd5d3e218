package rxthrottle

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTokenRenewsAfterRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		ctx := context.Background()
		b, err := NewBucket(Per(1, 10*ms))
		require.NoError(t, err)
		start := time.Now()
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, b.Stats().Held)
		time.Sleep(25 * ms) // the request is in flight
		tok.Release()
		tok.Release() // idempotent
		tok.Cancel()  // a no-op after Release
		require.Zero(t, b.Stats().Held)
		require.NoError(t, b.Wait(ctx))
		require.Equal(t, 35*ms, time.Since(start), "renewed W after the Release, not after the departure")
	})
}

func TestTokenCancelGivesItBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b, err := NewBucket(Per(1, time.Hour))
		require.NoError(t, err)
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		tok.Cancel()
		tok.Release() // a no-op after Cancel
		st := b.Stats()
		require.Equal(t, Stats{Admitted: 0, Cancelled: 1, Free: 1}, st)
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.True(t, ok, "the token given back is free at once")
	})
}

func TestTokenHoldTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		ctx := context.Background()
		b, err := NewBucket(Per(1, 10*ms), WithHoldTimeout(30*ms))
		require.NoError(t, err)
		start := time.Now()
		lost, err := b.Acquire(ctx) // never released in time
		require.NoError(t, err)
		require.NoError(t, b.Wait(ctx))
		require.Equal(t, 40*ms, time.Since(start), "departure + hold timeout + W")
		lost.Release() // after the timeout: changes nothing
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.False(t, ok, "a late Release must not renew the token again")
	})
}

func TestZeroTokenIsANoOp(t *testing.T) {
	var tok Token
	tok.Release()
	tok.Cancel()
	require.Equal(t, "rxthrottle.Token(none)", tok.String())
}

func TestAcquireNWeights(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		ctx := context.Background()
		b, err := NewBucket(Per(5, 10*ms))
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, b.WaitN(ctx, 3))
		ok, err := b.AllowN(ctx, 3)
		require.NoError(t, err)
		require.False(t, ok, "2 of 5 are free")
		ok, err = b.AllowN(ctx, 2)
		require.NoError(t, err)
		require.True(t, ok)
		tok, err := b.AcquireN(ctx, 4)
		require.NoError(t, err)
		require.Equal(t, 10*ms, time.Since(start), "waits until 4 are free at once")
		tok.Release()

		for _, n := range []int{0, -1, 6, math.MaxInt} {
			require.ErrorIs(t, b.WaitN(ctx, n), ErrInvalidCost, "WaitN(%d)", n)
			_, err := b.AcquireN(ctx, n)
			require.ErrorIs(t, err, ErrInvalidCost, "AcquireN(%d)", n)
			_, err = b.AllowN(ctx, n)
			require.ErrorIs(t, err, ErrInvalidCost, "AllowN(%d)", n)
		}
		require.EqualError(t, b.WaitN(ctx, 6), "rxthrottle: WaitN(n=6): n must be from 1 to the smallest N of the limits, 5: invalid cost")
	})
}

// TestSetLimitFailsWaitersItCannotServe: lowering N below a queued cost
// ends that wait with an error instead of leaving it forever.
func TestSetLimitFailsWaitersItCannotServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b, err := NewBucket(Per(5, time.Hour))
		require.NoError(t, err)
		require.NoError(t, b.WaitN(ctx, 5))
		done := make(chan error)
		go func() { done <- b.WaitN(ctx, 4) }()
		synctest.Wait()
		require.NoError(t, b.SetLimit(Per(3, time.Hour)))
		require.ErrorIs(t, <-done, ErrInvalidCost)
		require.Zero(t, b.Stats().Queued)
	})
}

func TestSpacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		ctx := context.Background()
		b, err := NewBucket(Per(5, 100*ms), WithSpacing(20*ms))
		require.NoError(t, err)
		start := time.Now()
		var got []time.Duration
		for range 6 {
			require.NoError(t, b.Wait(ctx))
			got = append(got, time.Since(start))
		}
		require.Equal(t, []time.Duration{0, 20 * ms, 40 * ms, 60 * ms, 80 * ms, 100 * ms}, got)
	})
}

// TestSetLimitKeepsHistory is the case: 10 admitted under
// Per(10, s), then Per(1, s) and Per(10, s) again: nothing more may go
// before the first ten renew. Before the fix, 9 more went at once.
func TestSetLimitKeepsHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b, err := NewBucket(Per(10, time.Second))
		require.NoError(t, err)
		for range 10 {
			require.NoError(t, b.Wait(ctx))
		}
		require.NoError(t, b.SetLimit(Per(1, time.Second)))
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, b.SetLimit(Per(10, time.Second)))
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.False(t, ok, "the window of the restored limit still holds 10")
		start := time.Now()
		require.NoError(t, b.Wait(ctx))
		require.Equal(t, 950*time.Millisecond, time.Since(start))
	})
}

// TestSetLimitHistoryProperty lowers and raises limits at random moments,
// often several times within a window: whatever the sequence, no window of
// a limit in force holds more than its N, counting every departure since
// the start ("as if the new limits had always been in force").
func TestSetLimitHistoryProperty(t *testing.T) {
	ms := time.Millisecond
	limits := []Limit{Per(8, 50*ms), Per(1, 50*ms), Per(3, 20*ms), Per(8, 100*ms), Per(2, 100*ms)}
	for seed := range 50 {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			b, err := NewBucket(limits[0])
			require.NoError(t, err)
			start := time.Now()
			var deps []time.Duration
			inForce := []Limit{} // inForce[i]: the limit at departure i
			cur := limits[0]
			for range 300 {
				if r.IntN(3) == 0 {
					cur = limits[r.IntN(len(limits))]
					require.NoError(t, b.SetLimit(cur))
					continue
				}
				if r.IntN(2) == 0 {
					time.Sleep(time.Duration(r.IntN(30)) * ms)
				}
				require.NoError(t, b.Wait(ctx))
				deps = append(deps, time.Since(start))
				inForce = append(inForce, cur)
			}
			for i, d := range deps {
				l, n := inForce[i], 0
				for _, e := range deps[:i+1] {
					if e > d-l.Window {
						n++
					}
				}
				require.LessOrEqual(t, n, l.N, "seed %d: departure %d at %v under %v", seed, i, d, l)
			}
		})
	}
}

func TestAcquireCancelledWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(1, time.Hour), WithHoldTimeout(2*time.Hour))
		require.NoError(t, err)
		tok, err := b.Acquire(context.Background())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err = b.Acquire(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, Stats{Admitted: 1, Waited: 0, Cancelled: 1, Held: 1}, b.Stats())
		tok.Cancel()
		require.True(t, errors.Is(b.WaitN(context.Background(), 2), ErrInvalidCost))
	})
}

// TestKeyedSetLimitFailsWaitersItCannotServe: the same for a key, with the
// Keyed's Stats counting the failed wait as cancelled.
func TestKeyedSetLimitFailsWaitersItCannotServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		k, err := NewKeyed(Per(5, time.Hour))
		require.NoError(t, err)
		require.NoError(t, k.WaitN(ctx, "a", 5))
		done := make(chan error)
		go func() { done <- k.WaitN(ctx, "a", 4) }()
		synctest.Wait()
		require.NoError(t, k.SetLimit(Per(3, time.Hour)))
		require.ErrorIs(t, <-done, ErrInvalidCost)
		st := k.Stats()
		require.Zero(t, st.Queued)
		require.EqualValues(t, 1, st.Cancelled)
		require.EqualValues(t, 1, st.Admitted)
	})
}
