package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// lateTimerContext is a context whose deadline has passed while its Done
// channel has not closed yet and Err is still nil: what a loaded machine's
// late timer leaves a caller for a moment.
type lateTimerContext struct {
	context.Context
	deadline time.Time
}

func (c lateTimerContext) Deadline() (time.Time, bool) { return c.deadline, true }

// TestStoreFailureAfterTheDeadline: a caller of Wait or Allow whose
// deadline has passed by the time its call to Redis fails gets
// context.DeadlineExceeded (a Wait counted as cancelled), as when its
// context's timer fired in time, not the failure policy's answer: a
// *StoreError, which Stats counts in Failed (FailClosed), or an admission
// it can no longer use (FailOpen).
func TestStoreFailureAfterTheDeadline(t *testing.T) {
	for _, policy := range []FailurePolicy{FailClosed, FailOpen} {
		t.Run(policy.String(), func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
			t.Cleanup(func() { _ = rdb.Close() })
			b, err := NewBucket(rdb, "late-timer", rxthrottle.Per(1, time.Second), WithFailurePolicy(policy))
			require.NoError(t, err)
			ctx := lateTimerContext{context.Background(), time.Now().Add(-time.Millisecond)}
			err = b.Wait(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			var store *StoreError
			require.False(t, errors.As(err, &store), "the failure policy's error: %v", err)
			st := b.Stats()
			require.Equal(t, uint64(1), st.Cancelled, "%+v", st)
			require.Zero(t, st.Admitted, "%+v", st)
			require.Zero(t, st.Failed, "%+v", st)

			ok, err := b.Allow(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.False(t, ok)
			require.False(t, errors.As(err, &store), "the failure policy's error: %v", err)
		})
	}
}
