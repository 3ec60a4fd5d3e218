package rxthrottle

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// WithAdaptiveConcurrency (SPEC.md, "Adaptive concurrency") on virtual
// time; examples/adaptive simulates a server against it.

func TestAdaptiveConcurrencyOptions(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		err  string
	}{
		{[]Option{WithAdaptiveConcurrency(0, 4)}, "WithAdaptiveConcurrency(0, 4): want 1 <= min <= max"},
		{[]Option{WithAdaptiveConcurrency(3, 2)}, "WithAdaptiveConcurrency(3, 2): want 1 <= min <= max"},
		{[]Option{WithAdaptiveConcurrency(1, 2), WithConcurrency(3)}, "one cap at a time"},
	} {
		_, err := NewBucket(Per(1, time.Second), c.opts...)
		require.ErrorContains(t, err, c.err)
		_, err = NewKeyed(Per(1, time.Second), c.opts...)
		require.ErrorContains(t, err, c.err)
	}
	b, err := NewBucket(Per(1, time.Second), WithConcurrency(3))
	require.NoError(t, err)
	require.Equal(t, 3, b.Stats().ConcurrencyCap)
	b, err = NewBucket(Per(1, time.Second))
	require.NoError(t, err)
	require.Zero(t, b.Stats().ConcurrencyCap)
}

// holdLoop runs callers that Acquire, hold for lat(open) (open: the holds
// open at the grant, itself included) and Release, until stop; it returns
// the most holds it saw open at once.
func holdLoop(b *Bucket, callers int, stop time.Duration, lat func(open int) time.Duration) int {
	var mu sync.Mutex
	var open, most int
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for time.Since(start) < stop {
				tok, err := b.Acquire(context.Background())
				if err != nil {
					panic(err)
				}
				mu.Lock()
				open++
				most = max(most, open)
				d := lat(open)
				mu.Unlock()
				time.Sleep(d)
				mu.Lock()
				open--
				mu.Unlock()
				tok.Release()
			}
		})
	}
	wg.Wait()
	return most
}

// TestAdaptiveConcurrencyFollowsLatency: the cap starts at min, grows while
// the holds stay fast, and falls back to where they are fast when the
// latency rises above 5 holds open; nothing is refused, nor the max
// exceeded.
func TestAdaptiveConcurrencyFollowsLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(100000, time.Second), WithAdaptiveConcurrency(2, 20))
		require.NoError(t, err)
		require.Equal(t, 2, b.Stats().ConcurrencyCap, "the start")
		fast := func(int) time.Duration { return 10 * time.Millisecond }
		require.LessOrEqual(t, holdLoop(b, 40, time.Second, fast), 20)
		require.Equal(t, 20, b.Stats().ConcurrencyCap, "after a second of fast holds")
		knee := func(open int) time.Duration {
			if open <= 5 {
				return 10 * time.Millisecond
			}
			return time.Duration(open*open) * 10 * time.Millisecond / 25
		}
		var caps []int
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 20 {
				time.Sleep(500 * time.Millisecond)
				caps = append(caps, b.Stats().ConcurrencyCap)
			}
		}()
		holdLoop(b, 40, 10*time.Second, knee)
		<-done
		for _, c := range caps[4:] {
			require.True(t, c >= 3 && c <= 8, "cap %d after 2 s at a knee of 5 holds (every cap %v)", c, caps)
		}
		st := b.Stats()
		require.Zero(t, st.Refused+st.Cancelled)
	})
}

// TestAdaptiveConcurrencyWaitsInTheFairQueue: callers over the cap wait
// in the fair queue: tenant B's two calls, arriving after A's ten, go
// second and fourth.
func TestAdaptiveConcurrencyWaitsInTheFairQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(100, time.Second), WithAdaptiveConcurrency(1, 1))
		require.NoError(t, err)
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		call := func(tenant string) {
			tok, err := b.Acquire(WithTenant(context.Background(), tenant, 1))
			require.NoError(t, err)
			mu.Lock()
			order = append(order, tenant)
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			tok.Release()
		}
		for range 10 {
			wg.Go(func() { call("A") })
			synctest.Wait()
		}
		for range 2 {
			wg.Go(func() { call("B") })
			synctest.Wait()
		}
		wg.Wait()
		require.Equal(t, []string{"A", "A", "B", "A", "B", "A", "A", "A", "A", "A", "A", "A"}, order)
	})
}
