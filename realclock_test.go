package rxthrottle

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/require"
)

// lockCheckClock counts the clock readings a bucket takes without holding
// its own lock: a reading taken before the lock may be older than a
// decision another goroutine makes meanwhile, and, recorded after the lock
// is taken, it would renew a token early (SPEC.md, "On the real clock").
// A reading with the lock free is one no lock protects (TryLock succeeds).
type lockCheckClock struct {
	clock.Clock
	b        **Bucket
	unlocked *atomic.Int32
}

func (c lockCheckClock) Since(t time.Time) time.Duration {
	if b := *c.b; b != nil && b.mu.TryLock() {
		b.mu.Unlock()
		c.unlocked.Add(1)
	}
	return c.Clock.Since(t)
}

// TestEveryReadingIsTakenUnderTheLock drives every path of a Bucket that
// reads the clock, the timer's wake-ups and hold timeouts included. Before
// the fix, wake, flush and Reserve read the clock before taking the lock:
// on the real clock, 52 of 2,000 grants were recorded up to 16 ms before
// they were made.
func TestEveryReadingIsTakenUnderTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var unlocked atomic.Int32
		var b *Bucket
		var err error
		b, err = NewBucket(Per(2, 10*time.Millisecond), WithHoldTimeout(50*time.Millisecond),
			WithClock(lockCheckClock{clock.New(), &b, &unlocked}))
		require.NoError(t, err)
		require.NoError(t, b.Wait(ctx))
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		r := b.Reserve()
		_ = r.Delay()
		_ = r.Time()
		go func() { _ = b.WaitN(ctx, 2) }() // granted by the timer
		synctest.Wait()
		tok.Release()
		<-r.Ready()
		_, _ = b.Allow(ctx)
		_, _ = b.Acquire(ctx) // never released: the hold timeout ends it
		b.Pause(time.Now().Add(5 * time.Millisecond))
		require.NoError(t, b.SetLimit(Per(3, 10*time.Millisecond)))
		require.NoError(t, b.Wait(ctx))
		time.Sleep(time.Second)
		_ = b.Stats()
		synctest.Wait()
		require.Zero(t, unlocked.Load(), "clock readings taken without the bucket's lock")
	})
}

// TestRealClockHeldTokensStress runs on the real clock: 1,000 goroutines
// acquire tokens (a fifth of them with a deadline that may cut the wait
// short), do random work, and release; a server "arrival" is drawn at
// random between Acquire's return and Release. However the scheduler
// interleaves them, no window of the real clock holds more than N
// arrivals, and every token comes back.
//
// It runs over a Bucket, and over a Keyed whose callers spread over four
// keys, each key with its own window, so that keys of one Keyed are used
// from several cores at once.
func TestRealClockHeldTokensStress(t *testing.T) {
	if testing.Short() {
		t.Skip("real-clock stress test")
	}
	limit, more := Per(10, 20*time.Millisecond), Per(25, 100*time.Millisecond)
	t.Run("Bucket", func(t *testing.T) {
		b, err := NewBucket(limit, WithLimit(more))
		require.NoError(t, err)
		heldTokensStress(t, 1, func(ctx context.Context, _ int) (Token, error) { return b.Acquire(ctx) }, b.Stats)
	})
	t.Run("Keyed", func(t *testing.T) {
		k, err := NewKeyed(limit, WithLimit(more))
		require.NoError(t, err)
		keys := []string{"a", "b", "c", "d"}
		heldTokensStress(t, len(keys), func(ctx context.Context, key int) (Token, error) { return k.Acquire(ctx, keys[key]) }, k.Stats)
	})
}

// heldTokensStress runs TestRealClockHeldTokensStress's callers over keys
// schedules (caller i on schedule i%keys), each acquiring through acquire,
// and checks each schedule's arrivals against Per(10, 20ms) and
// Per(25, 100ms), and stats once every caller is done.
func heldTokensStress(t *testing.T, keys int, acquire func(ctx context.Context, key int) (Token, error), stats func() Stats) {
	const callers = 1000
	var mu sync.Mutex
	arrivals := make([][]time.Duration, keys)
	start := time.Now()
	var wg sync.WaitGroup
	var gone, cancelled int
	for i := range callers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 3))
			ctx := context.Background()
			if r.IntN(5) == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(2000))*time.Millisecond)
				defer cancel()
			}
			tok, err := acquire(ctx, i%keys)
			if err != nil {
				require.True(t, errors.Is(err, context.DeadlineExceeded))
				mu.Lock()
				cancelled++
				mu.Unlock()
				return
			}
			departed := time.Since(start)
			work := time.Duration(r.IntN(3000)) * time.Microsecond
			if r.IntN(10) == 0 {
				time.Sleep(work)
				tok.Cancel() // never sent: no arrival
				return
			}
			time.Sleep(work)
			released := time.Since(start)
			arrival := departed + time.Duration(r.Int64N(int64(released-departed)+1))
			tok.Release()
			mu.Lock()
			arrivals[i%keys] = append(arrivals[i%keys], arrival)
			gone++
			mu.Unlock()
		})
	}
	wg.Wait()
	for key, a := range arrivals {
		require.LessOrEqual(t, specmodel.MaxInWindow(a, nil, 20*time.Millisecond), 10, "schedule %d", key)
		require.LessOrEqual(t, specmodel.MaxInWindow(a, nil, 100*time.Millisecond), 25, "schedule %d", key)
	}
	st := stats()
	require.Zero(t, st.Held)
	require.Zero(t, st.Queued)
	require.EqualValues(t, gone, st.Admitted, "admitted = released (the cancelled ones gave theirs back)")
	t.Logf("%d arrivals, %d waits cancelled, in %v", gone, cancelled, time.Since(start).Round(time.Millisecond))
}
