package redisstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// waitOutcomes counts how a Bucket's Waits ended, in the classes its
// Stats count them in: admitted (nil), cancelled (the context's error, or
// one wrapping rxthrottle.ErrDeadline), and failed (a *StoreError, the
// failure policy's answer, FailClosed's: Stats.Failed).
// A *StoreError is told first: the failure it wraps may wrap
// context.DeadlineExceeded (a call timeout, the last failure of an open
// breaker), which is no cancellation. Safe for concurrent use.
type waitOutcomes struct {
	admitted, cancelled, failed atomic.Int64
}

// add counts the outcome of a Wait that returned err; an error of none of
// the classes fails t.
func (o *waitOutcomes) add(t *testing.T, err error) {
	var serr *StoreError
	switch {
	case err == nil:
		o.admitted.Add(1)
	case errors.As(err, &serr):
		o.failed.Add(1)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		o.cancelled.Add(1)
	default:
		t.Errorf("Wait: %v, want nil, a context's error or a *StoreError", err)
	}
}

// total is the number of Waits counted.
func (o *waitOutcomes) total() int64 {
	return o.admitted.Load() + o.cancelled.Load() + o.failed.Load()
}

// requireCounted fails unless st counts the Waits as they ended: each
// admitted one in Admitted, each cancelled one in Cancelled, each failed
// one in Failed, none refused.
func (o *waitOutcomes) requireCounted(t *testing.T, st rxthrottle.Stats) {
	t.Helper()
	require.EqualValues(t, o.admitted.Load(), st.Admitted, "admitted: %+v", st)
	require.EqualValues(t, o.cancelled.Load(), st.Cancelled, "cancelled: %+v", st)
	require.EqualValues(t, o.failed.Load(), st.Failed, "failed: %+v", st)
	require.Zero(t, st.Refused, "refused: %+v", st)
}

// stallClient holds every lease request (an EVALSHA whose arguments hold
// "lease") until its context ends: a server that does not answer them.
type stallClient struct{ Client }

func (c stallClient) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	if slices.Contains(args, any(opLease)) {
		<-ctx.Done() // the call's bound: the call timeout
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
		return cmd
	}
	return c.Client.EvalSha(ctx, sha, keys, args...)
}

// TestLeaseStatsStoreFailure (issue 30): a Wait whose lease gets no
// answer within the call timeout takes the normal path, where the breaker
// the timeout opened answers it with FailClosed's *StoreError, which
// wraps ErrCircuitOpen and the timeout, and so context.DeadlineExceeded:
// Stats counts it in Failed (it was not admitted, and its context did not
// end; before Failed, in none of its counters). TestLeaseRandomCancellations took every error
// wrapping context.DeadlineExceeded for a cancellation, and so once
// counted 3199 of its 3200 Waits in Stats at load 20 (a lease call that
// took over 500 ms opened the breaker, and a caller whose context was
// still live met it); with a stall of one lease call past a 20 ms
// timeout, it counted hundreds fewer, exactly the *StoreErrors.
func TestLeaseStatsStoreFailure(t *testing.T) {
	srv := redistest.Start(t)
	b, err := NewBucket(stallClient{srv.Client(t)}, "failed", rxthrottle.Per(100, time.Minute), WithLease(0),
		WithTimeout(20*time.Millisecond), WithRetryBackoff(time.Hour, time.Hour))
	require.NoError(t, err)
	err = b.Wait(context.Background())
	require.ErrorIs(t, err, ErrCircuitOpen)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the timeout that opened the breaker")
	var o waitOutcomes
	o.add(t, err)
	require.EqualValues(t, 1, o.failed.Load(), "a *StoreError is a failure, not a cancellation")
	o.requireCounted(t, b.Stats())
	require.NoError(t, b.Close()) // nothing to report: no lease was granted
}

// TestLeaseRandomCancellations: many callers with random deadlines and
// cancellations (before, during and after their lease's round trip);
// after Close nothing is held, every admitted caller, and only those,
// completed once in Redis, and Stats counts each Wait as it ended
// (waitOutcomes: a *StoreError, the failure policy's answer to a call
// that timed out on a loaded machine, counts in Failed, though it wraps
// context.DeadlineExceeded). The call timeout is the suite's: a
// report that fails leaves its tokens held to their lease deadline.
func TestLeaseRandomCancellations(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(100000, time.Minute), WithLease(0), WithTimeout(suiteTimeout))
	var o waitOutcomes
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 200 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(300))*time.Microsecond)
				if rand.IntN(4) == 0 {
					go cancel()
				}
				o.add(t, b.Wait(ctx))
				cancel()
			}
		})
	}
	wg.Wait()
	require.NoError(t, b.Close())
	st := b.Stats()
	t.Logf("%d admitted (%d from leases), %d cancelled, %d failed", st.Admitted, b.Leased(), st.Cancelled, o.failed.Load())
	require.EqualValues(t, 16*200, o.total())
	o.requireCounted(t, st)
	requireNothingHeld(t, srv, b)
	require.Len(t, emissions(t, srv, b), int(o.admitted.Load()), "each admission completed once in Redis")
}
