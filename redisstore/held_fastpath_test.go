package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// TestWaitFastPathThenAcquire: Wait admissions while nothing is held skip
// the held set and, with fewer completions than N - n, the lookup; then
// Acquires arrive and the schedule is still SPEC.md's, to the
// microsecond: the first goes at once, the second W after the Wait, the
// next Wait is blocked while both are held (and told the earliest lease
// deadline), and departs W after the first release.
func TestWaitFastPathThenAcquire(t *testing.T) {
	const w = 50 * time.Millisecond
	hold := 10 * time.Second
	b, _ := newTestBucket(t, rxthrottle.Per(2, w), WithHoldTimeout(hold))
	ctx := context.Background()
	wait := reserve(t, b) // nothing held, no completion: no lookup
	require.Equal(t, wait.now, wait.e)
	acq1 := reserveN(t, b, 1, true)
	require.Equal(t, acq1.now, acq1.e, "a token is free: the Acquire goes at once")
	acq2 := reserveN(t, b, 1, true)
	require.Equal(t, max(acq2.now, wait.e+micros(w)), acq2.e, "the second Acquire takes the Wait's token, W after it")

	blocked, err := b.s.admit(ctx, b.keys, request{n: 1})
	require.NoError(t, err)
	require.True(t, blocked.blocked, "N = 2, both held: blocked")
	require.Equal(t, acq1.e+micros(hold), blocked.e, "told the earliest lease deadline")

	k, now := endNow(t, b, acq1.id, 1, acq1.e, "release")
	require.Equal(t, 1, k)
	after, err := b.s.admit(ctx, b.keys, request{n: 1})
	require.NoError(t, err)
	require.True(t, after.admitted)
	c := max(now, acq1.e) // the release's completion
	require.Equal(t, max(after.now, acq2.e, c+micros(w)), after.e, "W after the release (and not before the caller before it)")
}

// TestEndScript: a batch of ends only runs endScript, which releases as
// batchScript does, and ends nothing, creating no key, when the
// schedule's state is gone.
func TestEndScript(t *testing.T) {
	const w = time.Hour
	b, srv := newTestBucket(t, rxthrottle.Per(1, w))
	acq := reserveN(t, b, 1, true)
	k, now := endNow(t, b, acq.id, 1, acq.e, "release")
	require.Equal(t, 1, k)
	require.Equal(t, []int64{max(now, acq.e)}, emissions(t, srv, b), "completed at the release")
	next := reserve(t, b)
	require.Equal(t, max(now, acq.e)+micros(w), next.e, "W after the release")

	_, err := srv.Do("DEL", b.keys[0], b.keys[1], b.keys[2])
	require.NoError(t, err)
	k, _ = endNow(t, b, next.id, 1, next.e, "withdraw")
	require.Zero(t, k)
	n, err := srv.Do("EXISTS", b.keys[0], b.keys[1], b.keys[2])
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "no key without an expiry")
}
