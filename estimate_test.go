package rxthrottle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// estimate is b.EstimateWait(n), which must succeed.
func estimate(t *testing.T, b *rxthrottle.Bucket, n int) time.Duration {
	t.Helper()
	d, err := b.EstimateWait(context.Background(), n)
	require.NoError(t, err)
	return d
}

// TestEstimateWaitCountsTheQueue: Per(1, 100ms), one token used at 0 and
// three callers waiting: the deadline rule's bound for a fourth is 100ms,
// so one with 250ms passes it and sleeps to its deadline; the estimate
// says 400ms, which is when the fourth goes.
func TestEstimateWaitCountsTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := 100 * time.Millisecond
		b := mustBucket(t, rxthrottle.Per(1, w))
		require.Zero(t, estimate(t, b, 1), "a free token")
		require.NoError(t, b.Wait(t.Context()))
		require.Equal(t, w, estimate(t, b, 1), "the token back at 100ms")
		for range 3 {
			go func() { _ = b.Wait(context.Background()) }()
			synctest.Wait()
		}
		require.Equal(t, 4*w, estimate(t, b, 1))

		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := b.Wait(ctx)
		require.Equal(t, context.DeadlineExceeded, err, "passed the deadline rule, then slept to its deadline")
		require.Equal(t, 250*time.Millisecond, time.Since(start))

		// At 250ms, one caller still waits (it goes at 300): a new one
		// goes at 400.
		require.Equal(t, 150*time.Millisecond, estimate(t, b, 1))
		start = time.Now()
		require.NoError(t, b.Wait(context.Background()))
		require.Equal(t, 150*time.Millisecond, time.Since(start), "it went when estimated")
		time.Sleep(time.Second) // the callers that waited are done
	})
}

// TestEstimateWaitPriorities: callers of a lower priority than the
// estimate's do not count; those of a higher one do.
func TestEstimateWaitPriorities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := 100 * time.Millisecond
		b := mustBucket(t, rxthrottle.Per(1, w))
		require.NoError(t, b.Wait(t.Context()))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _ = b.Wait(rxthrottle.WithPriority(ctx, -1)) }()
		synctest.Wait()
		require.Equal(t, w, estimate(t, b, 1), "a lower priority goes after")
		go func() { _ = b.Wait(rxthrottle.WithPriority(ctx, 1)) }()
		synctest.Wait()
		require.Equal(t, 2*w, estimate(t, b, 1), "a higher priority goes before")
		hi := rxthrottle.WithPriority(context.Background(), 2)
		d, err := b.EstimateWait(hi, 1)
		require.NoError(t, err)
		require.Equal(t, w, d, "the estimate's own priority")
		require.Equal(t, 2*w, estimate(t, b, 1), "the probe left nothing behind")
		cancel()
		synctest.Wait()
	})
}

// TestEstimateWaitTenants: with two callers of tenant a waiting (virtual
// finishes 1 and 2), a caller of another tenant of weight 1 (finish 1, a
// tie the earlier arrival wins) would go second, at 2W; of weight 3
// (finish 1/3) first, at W; of tenant a, third. Each estimate is where
// WaitN would go: the last is checked by waiting.
func TestEstimateWaitTenants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := 100 * time.Millisecond
		b := mustBucket(t, rxthrottle.Per(1, w))
		require.NoError(t, b.Wait(t.Context()))
		a := rxthrottle.WithTenant(context.Background(), "a", 1)
		for range 2 {
			go func() { _ = b.Wait(a) }()
			synctest.Wait()
		}
		for _, c := range []struct {
			ctx  context.Context
			want time.Duration
		}{
			{rxthrottle.WithTenant(context.Background(), "b", 1), 2 * w},
			{context.Background(), 2 * w},
			{rxthrottle.WithTenant(context.Background(), "b", 3), w},
			{a, 3 * w},
		} {
			d, err := b.EstimateWait(c.ctx, 1)
			require.NoError(t, err)
			require.Equal(t, c.want, d, "tenant %q", fmt.Sprint(rxthrottle.TenantFrom(c.ctx)))
		}
		start := time.Now()
		require.NoError(t, b.Wait(rxthrottle.WithTenant(context.Background(), "b", 3)))
		require.Equal(t, w, time.Since(start))
		time.Sleep(time.Second)
	})
}

// TestEstimateWaitHeld: a held token is taken to be released now, so the
// estimate moves with the clock while it is held, and the deadline rule's
// bound is the estimate when nobody waits.
func TestEstimateWaitHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := 100 * time.Millisecond
		b := mustBucket(t, rxthrottle.Per(1, w))
		tok, err := b.Acquire(t.Context())
		require.NoError(t, err)
		require.Equal(t, w, estimate(t, b, 1))
		time.Sleep(30 * time.Millisecond)
		require.Equal(t, w, estimate(t, b, 1), "released now, back W later")
		tok.Release()
		time.Sleep(30 * time.Millisecond)
		require.Equal(t, 70*time.Millisecond, estimate(t, b, 1), "released at 30ms")
	})
}

// TestEstimateWaitErrors: a cost no limit can serve, a Bucket not made by
// NewBucket, and the Keyed variant's key errors.
func TestEstimateWaitErrors(t *testing.T) {
	b := mustBucket(t, rxthrottle.Per(2, time.Second))
	ctx := context.Background()
	_, err := b.EstimateWait(ctx, 3)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	_, err = b.EstimateWait(ctx, 0)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	//lint:ignore SA1012 a nil context is the bad input under test
	_, err = b.EstimateWait(nil, 1)
	require.Error(t, err)
	_, err = new(rxthrottle.Bucket).EstimateWait(ctx, 1)
	require.Error(t, err)
	var nilBucket *rxthrottle.Bucket
	_, err = nilBucket.EstimateWait(ctx, 1)
	require.Error(t, err)

	k, err := rxthrottle.NewKeyed(rxthrottle.Per(2, time.Second))
	require.NoError(t, err)
	_, err = k.EstimateWait(ctx, "", 1)
	require.Error(t, err)
	_, err = k.EstimateWait(ctx, "a", 3)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
}

// TestKeyedEstimateWait: each key's estimate counts its own callers only.
func TestKeyedEstimateWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := 100 * time.Millisecond
		k, err := rxthrottle.NewKeyed(rxthrottle.Per(1, w))
		require.NoError(t, err)
		require.NoError(t, k.Wait(t.Context(), "a"))
		go func() { _ = k.Wait(context.Background(), "a") }()
		synctest.Wait()
		for key, want := range map[string]time.Duration{"a": 2 * w, "b": 0} {
			d, err := k.EstimateWait(context.Background(), key, 1)
			require.NoError(t, err)
			require.Equal(t, want, d, key)
		}
		time.Sleep(2 * w)
	})
}

// TestEstimateWaitExactWhenNothingChanges: callers of random costs queue
// one after the other at 0 on random limits with a spacing; with no hold,
// no cancellation and nobody arriving later, each one's estimate at its
// arrival is its wait, to the nanosecond.
func TestEstimateWaitExactWhenNothingChanges(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 28))
		synctest.Test(t, func(t *testing.T) {
			limits := []rxthrottle.Limit{rxthrottle.Per(2+r.IntN(4), time.Duration(1+r.IntN(20))*time.Millisecond)}
			if r.IntN(2) == 0 {
				limits = append(limits, rxthrottle.Per(limits[0].N+r.IntN(6), time.Duration(20+r.IntN(40))*time.Millisecond))
			}
			var opts []rxthrottle.Option
			for _, l := range limits[1:] {
				opts = append(opts, rxthrottle.WithLimit(l))
			}
			if r.IntN(2) == 0 {
				opts = append(opts, rxthrottle.WithSpacing(time.Duration(r.IntN(3))*time.Millisecond))
			}
			b := mustBucket(t, limits[0], opts...)
			callers := 1 + r.IntN(12)
			est := make([]time.Duration, callers)
			got := make([]time.Duration, callers)
			var mu sync.Mutex
			start := time.Now()
			for i := range callers {
				n := 1 + r.IntN(limits[0].N)
				est[i] = estimate(t, b, n)
				go func() {
					if err := b.WaitN(context.Background(), n); err == nil {
						mu.Lock()
						got[i] = time.Since(start)
						mu.Unlock()
					}
				}()
				synctest.Wait()
			}
			time.Sleep(time.Hour)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, est, got, "seed %d, limits %v", seed, limits)
		})
	}
}

// ExampleBucket_EstimateWait gives up before waiting: a caller with 2.5s
// left, behind two callers already waiting for a token a second, would
// pass the deadline rule (its lower bound is the next token, 1s away) and
// then sleep until its deadline. The estimate counts the queue.
func ExampleBucket_EstimateWait() {
	mock := clock.NewMock()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = b.Wait(ctx)
	for range 2 {
		go func() { _ = b.Wait(ctx) }()
	}
	for b.Stats().Queued < 2 { // until both wait
		time.Sleep(time.Millisecond)
	}

	left := 2500 * time.Millisecond
	d, err := b.EstimateWait(ctx, 1)
	if err != nil {
		panic(err)
	}
	if d > left {
		fmt.Printf("about %v to wait with %v left: try later\n", d, left)
	}
	// Output:
	// about 3s to wait with 2.5s left: try later
}
