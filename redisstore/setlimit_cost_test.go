package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestSetLimitEndsHeldBackWait: a caller blocked by held tokens (it holds
// no reservation, and asks again when a token is released) whose cost a
// SetLimit lowered the smallest N below fails with ErrInvalidCost when it
// asks again, counted in Cancelled (SPEC.md, "Changing limits"; limitertest
// checks a caller with a reservation). It asked under the new limits with
// its old cost, and the script's answer (blocked until never) was taken
// for a malformed reply: a *StoreError, counted in Failed, a failure for
// the circuit breaker.
func TestSetLimitEndsHeldBackWait(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(5, time.Hour))
	ctx := context.Background()
	held, err := b.AcquireN(ctx, 5)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := b.AcquireN(ctx, 4)
		done <- err
	}()
	waitQueued(t, b, 1)
	require.NoError(t, b.SetLimit(rxthrottle.Per(3, time.Hour)))
	held.Cancel() // it asks again
	err = recv(t, done)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	var serr *StoreError
	require.NotErrorAs(t, err, &serr)
	st := b.Stats()
	require.Equal(t, [4]uint64{1, 1, 0, 0}, [4]uint64{st.Admitted, st.Cancelled, st.Refused, st.Failed}, "Admitted, Cancelled, Refused, Failed")
	require.Zero(t, st.Queued)
}

// TestBatchAnswersAnUnservableCostStale: an admission whose cost the
// limits it runs under cannot serve (a SetLimit lowered them between the
// caller's check and its batch) is answered stale, admitting nothing, so
// that its caller checks its cost again and fails (commitConf); the
// script's answer for it was taken for a malformed reply, which failed the
// whole batch.
func TestBatchAnswersAnUnservableCostStale(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(3, time.Hour))
	ctx := context.Background()
	out := make([]admission, 2)
	require.NoError(t, b.s.runBatch(ctx, b.keys, []request{{n: 4, departs: true}, {n: 1, departs: true}}, out))
	require.True(t, out[0].stale, "%+v", out[0])
	require.False(t, out[0].admitted)
	require.True(t, out[1].admitted, "the batch's other caller: %+v", out[1])
	err := b.s.stillServes("WaitN", &request{n: 4})
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
}

// waitQueued waits until n callers of b wait.
func waitQueued(t *testing.T, b *Bucket, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return b.Stats().Queued >= n }, 30*time.Second, time.Millisecond, "%d callers waiting", n)
}

// TestSetLimitEndsLeaseWait: the same for a caller waiting in the lease
// pool (behind a caller of its process on the normal path) when the
// SetLimit comes: the pool sends it to the normal path once a lease cannot
// serve it, and it fails there, counted in Cancelled. The normal path
// took its cost for a caller's own bad argument at the call, and counted
// it nowhere.
func TestSetLimitEndsLeaseWait(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(5, time.Hour), WithLease(0))
	t.Cleanup(func() { _ = b.Close() })
	ctx := context.Background()
	held, err := b.AcquireN(ctx, 5) // AcquireN takes the normal path
	require.NoError(t, err)
	blocked := make(chan error, 1)
	go func() {
		tok, err := b.AcquireN(ctx, 2) // on the normal path, blocked by held
		tok.Release()
		blocked <- err
	}()
	waitQueued(t, b, 1)
	done := make(chan error, 1)
	go func() { done <- b.WaitN(ctx, 4) }() // in the pool, behind it
	waitQueued(t, b, 2)
	b.pool.mu.Lock()
	require.Equal(t, [2]int{1, 1}, [2]int{b.pool.normal, b.pool.waiters.len()}, "on the normal path, in the pool")
	b.pool.mu.Unlock()
	require.NoError(t, b.SetLimit(rxthrottle.Per(3, time.Hour)))
	held.Cancel()
	require.NoError(t, recv(t, blocked))
	require.ErrorIs(t, recv(t, done), rxthrottle.ErrInvalidCost)
	st := b.Stats()
	require.Equal(t, [4]uint64{2, 1, 0, 0}, [4]uint64{st.Admitted, st.Cancelled, st.Refused, st.Failed}, "Admitted, Cancelled, Refused, Failed")
	require.Zero(t, st.Queued)
}

// TestSetLimitBetweenPoolAndNormalPath: a SetLimit landing after the lease
// pool sent a caller to the normal path (its cost checked at its arrival)
// and before the normal path's check of its cost: the caller fails with
// ErrInvalidCost, counted in Cancelled, and leaves the pool's order. The
// interleaving is forced by running Bucket.take's two steps (pool.take,
// then normal) with the SetLimit between them. The pool checked the cost
// again after its decision, which left a gap before the normal path's
// check: a caller whose SetLimit fell in it was counted in no Stats
// counter, as for a bad argument at the call.
func TestSetLimitBetweenPoolAndNormalPath(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(5, time.Hour), WithLease(0))
	t.Cleanup(func() { _ = b.Close() })
	ctx := context.Background()
	_, ok, done, err := b.pool.take(ctx, 4, true) // AcquireN: sent to the normal path at once
	require.NoError(t, err)
	require.False(t, ok, "not served from the pool")
	require.NotNil(t, done, "sent to the normal path")
	require.NoError(t, b.SetLimit(rxthrottle.Per(3, time.Hour)))
	_, err = b.normal(ctx, 4, true, "AcquireN", done)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	st := b.Stats()
	require.Equal(t, [4]uint64{0, 1, 0, 0}, [4]uint64{st.Admitted, st.Cancelled, st.Refused, st.Failed}, "Admitted, Cancelled, Refused, Failed")
	require.Zero(t, st.Queued)
	b.pool.mu.Lock()
	require.Equal(t, [2]int{0, 0}, [2]int{b.pool.normal, b.pool.waiters.len()}, "on the normal path, in the pool")
	b.pool.mu.Unlock()
	// A bad cost at the call is the caller's own: refused at once by the
	// pool (no done), counted nowhere.
	_, ok, done, err = b.pool.take(ctx, 4, true)
	require.NoError(t, err)
	require.False(t, ok)
	require.Nil(t, done, "refused at once")
	_, err = b.normal(ctx, 4, true, "AcquireN", done)
	require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
	require.Equal(t, uint64(1), b.Stats().Cancelled, "Cancelled")
}
