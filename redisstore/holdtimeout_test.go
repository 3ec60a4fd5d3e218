package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestThrottleMapWithEndsCallsAtTheStoreHoldTimeout: ThrottleMapWith over
// a redisstore Bucket ends fn's context at the Bucket's hold timeout, not
// at rxthrottle.DefaultHoldTimeout: a call that outlived its lease would
// reach the server after its token had renewed. The assertion is on the
// deadline fn is given, which the clock cannot move.
//
// With WithLease, a token's lease deadline runs from the lease's grant,
// up to min(leaseAge, hold/2) before Acquire hands it out: fn must be
// ended that much earlier.
func TestThrottleMapWithEndsCallsAtTheStoreHoldTimeout(t *testing.T) {
	const hold = 300 * time.Millisecond
	for _, leased := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "leased"}[leased], func(t *testing.T) {
			opts := []Option{rxthrottle.WithHoldTimeout(hold)}
			bound := hold
			if leased {
				opts = append(opts, WithLease(0))
				bound = hold - min(leaseAge, hold/2)
			}
			b, _ := newTestBucket(t, rxthrottle.Per(5, time.Second), opts...)
			require.LessOrEqual(t, b.HoldTimeout(), bound)
			require.Greater(t, b.HoldTimeout(), bound-hold/100)
			checkMapDeadlines(t, b, b.HoldTimeout())
		})
	}
}

// checkMapDeadlines runs two items through ThrottleMapWith over b with an
// fn that hangs until its context ends, and checks that fn was given a
// deadline at most bound away, which ended it.
func checkMapDeadlines(t *testing.T, b *Bucket, bound time.Duration) {
	t.Helper()

	type seen struct {
		left  time.Duration // the deadline's distance when fn started
		ended error         // ctx.Err() once fn stopped waiting
	}
	fn := func(ctx context.Context, v any) (any, error) {
		d, ok := ctx.Deadline()
		if !ok {
			return seen{left: -1}, nil
		}
		s := seen{left: time.Until(d)}
		<-ctx.Done() // a call that hangs until its context ends
		s.ended = ctx.Err()
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []seen
	var errs []error
	for item := range rxthrottle.ThrottleMapWith(b, fn)(rxgo.Just(1, 2)()).Observe(rxgo.WithContext(ctx)) {
		if item.E != nil {
			errs = append(errs, item.E)
			continue
		}
		got = append(got, item.V.(seen))
	}
	require.NoError(t, ctx.Err(), "the calls must end at the hold timeout, not hang")
	for _, err := range errs {
		require.ErrorIs(t, err, rxthrottle.ErrHoldTimeout)
	}
	for _, s := range got {
		require.Greater(t, s.left, time.Duration(0), "fn must be given a deadline")
		require.LessOrEqual(t, s.left, bound, "fn's deadline must be the store's hold timeout")
		require.ErrorIs(t, s.ended, context.DeadlineExceeded)
	}
	require.Equal(t, 2, len(got)+len(errs), "every item comes out once")
}

// A Keyed reports its hold timeout, and ForKey's Limiter over it reports
// the same: the operators over one key (ThrottleWith changes an item's
// Token before half of it, ThrottleMapWith ends fn at it) act on the
// store's hold timeout, not on rxthrottle.DefaultHoldTimeout.
func TestKeyedHoldTimeout(t *testing.T) {
	const hold = 300 * time.Millisecond
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "holdk", rxthrottle.Per(5, time.Second), rxthrottle.WithHoldTimeout(hold), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, hold, k.HoldTimeout())
	l, ok := rxthrottle.ForKey(k, "a").(interface{ HoldTimeout() time.Duration })
	require.True(t, ok, "ForKey's Limiter has no HoldTimeout method")
	require.Equal(t, hold, l.HoldTimeout())
}
