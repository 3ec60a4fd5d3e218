package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// holdOpen counts the holds open at once and the most seen.
type holdOpen struct{ now, most atomic.Int64 }

func (h *holdOpen) open() {
	n := h.now.Add(1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
}

// TestAdaptiveConcurrencyCapsThisProcess (SPEC.md, "Adaptive
// concurrency"): WithAdaptiveConcurrency caps this process's holds open at
// once, on a Bucket and on each key of a Keyed limiter: 8 goroutines
// acquiring never have more than the cap open, nobody is refused, and
// Stats reports the cap. With min = max the cap cannot move. Without the
// gate (capgate.go) all 8 were open at once.
func TestAdaptiveConcurrencyCapsThisProcess(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	opt := rxthrottle.WithAdaptiveConcurrency(2, 2)
	b, err := NewBucket(rdb, "adapt", rxthrottle.Per(10000, time.Second), opt, WithTimeout(suiteTimeout))
	require.NoError(t, err)
	k, err := NewKeyed(rdb, "adaptk", rxthrottle.Per(10000, time.Second), opt, WithTimeout(suiteTimeout))
	require.NoError(t, err)
	for name, l := range map[string]rxthrottle.Limiter{"Bucket": b, "Keyed": rxthrottle.ForKey(k, "u")} {
		t.Run(name, func(t *testing.T) {
			var h holdOpen
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 5 {
						tok, err := l.Acquire(context.Background())
						require.NoError(t, err)
						h.open()
						time.Sleep(2 * time.Millisecond)
						h.now.Add(-1)
						tok.Release()
					}
				})
			}
			wg.Wait()
			require.LessOrEqual(t, h.most.Load(), int64(2))
			require.EqualValues(t, 2, h.most.Load(), "the cap was reached (8 goroutines)")
			require.Zero(t, l.Stats().Refused)
		})
	}
	require.Equal(t, 2, b.Stats().ConcurrencyCap)
}

// TestAdaptiveConcurrencyGrows: the cap starts at min and grows while the
// holds that fill it keep their latency (on a clock that does not move,
// every latency is the least): 8 goroutines on a cap of 1 to 8 end with a
// cap above 1, and more than one hold open at once.
func TestAdaptiveConcurrencyGrows(t *testing.T) {
	srv := redistest.Start(t)
	b, err := NewBucket(srv.Client(t), "adaptgrow", rxthrottle.Per(100000, time.Second),
		rxthrottle.WithAdaptiveConcurrency(1, 8), rxthrottle.WithClock(clock.NewMock()), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 1, b.Stats().ConcurrencyCap, "it starts at min")
	var h holdOpen
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 30 {
				tok, err := b.Acquire(context.Background())
				require.NoError(t, err)
				h.open()
				time.Sleep(100 * time.Microsecond)
				h.now.Add(-1)
				tok.Release()
			}
		})
	}
	wg.Wait()
	require.Greater(t, b.Stats().ConcurrencyCap, 1)
	require.LessOrEqual(t, b.Stats().ConcurrencyCap, 8)
	require.LessOrEqual(t, h.most.Load(), int64(8))
}

// TestAdaptiveConcurrencyFront: a caller over the cap waits in its place
// at this process's front: a Wait behind it waits its turn (it does not
// return while the capped hold waits), one whose context ends leaves
// nothing taken, the queue bound refuses a caller that would wait there,
// and a hold never released frees its place at its hold timeout.
func TestAdaptiveConcurrencyFront(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	b, err := NewBucket(srv.Client(t), "adaptfront", rxthrottle.Per(1000, time.Second),
		rxthrottle.WithAdaptiveConcurrency(1, 1), rxthrottle.WithHoldTimeout(time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	a, err := b.Acquire(ctx)
	require.NoError(t, err)

	short, cancel := context.WithCancel(ctx)
	gone := make(chan error, 1)
	go func() { _, err := b.Acquire(short); gone <- err }()
	require.Eventually(t, func() bool { return b.Stats().Queued == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-gone, context.Canceled)
	require.EqualValues(t, 1, b.Stats().Cancelled)

	held, waited := make(chan rxthrottle.Token, 1), make(chan error, 1)
	go func() {
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		held <- tok
	}()
	require.Eventually(t, func() bool { return b.s.gates.waiting(b.keys[0]) }, 10*time.Second, time.Millisecond)
	go func() { waited <- b.Wait(ctx) }()
	ok, err := b.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "Allow does not go before the callers waiting at the front")
	select {
	case <-waited:
		t.Fatal("a Wait went before the capped hold ahead of it")
	case <-time.After(50 * time.Millisecond):
	}
	a.Release()
	require.NoError(t, <-waited)
	tok := <-held

	bounded, err := NewBucket(srv.Client(t), "adaptbound", rxthrottle.Per(1000, time.Second),
		rxthrottle.WithAdaptiveConcurrency(1, 1), rxthrottle.WithMaxQueue(0), rxthrottle.WithHoldTimeout(100*time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	first, err := bounded.Acquire(ctx)
	require.NoError(t, err)
	_, err = bounded.Acquire(ctx)
	require.ErrorIs(t, err, rxthrottle.ErrQueueFull)
	require.EqualValues(t, 1, bounded.Stats().Refused)
	_ = first // never released: its place is free at its hold timeout
	require.Eventually(t, func() bool {
		tok, err := bounded.Acquire(ctx)
		if err != nil {
			return false
		}
		tok.Release()
		return true
	}, 10*time.Second, 10*time.Millisecond, "the timed-out hold freed its place")
	tok.Release()
}

// TestAdaptiveConcurrencyRefusals: one cap at a time, and not with leases.
func TestAdaptiveConcurrencyRefusals(t *testing.T) {
	srv := redistest.Start(t)
	_, err := NewBucket(srv.Client(t), "x", rxthrottle.Per(1, time.Second), rxthrottle.WithAdaptiveConcurrency(1, 4), WithLease(0))
	require.ErrorContains(t, err, "WithAdaptiveConcurrency")
	_, err = NewBucket(srv.Client(t), "x", rxthrottle.Per(1, time.Second), rxthrottle.WithAdaptiveConcurrency(1, 4), rxthrottle.WithConcurrency(2))
	require.Error(t, err)
	_, err = NewKeyed(srv.Client(t), "x", rxthrottle.Per(1, time.Second), rxthrottle.WithAdaptiveConcurrency(0, 4))
	require.Error(t, err)
}
