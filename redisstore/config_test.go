package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// allowN calls Allow n times and returns how many were admitted.
func allowN(t *testing.T, l interface {
	Allow(context.Context) (bool, error)
}, n int) int {
	t.Helper()
	got := 0
	for range n {
		ok, err := l.Allow(context.Background())
		require.NoError(t, err)
		if ok {
			got++
		}
	}
	return got
}

// get returns what l has seen (errorLog: outage_test.go).
func (l *errorLog) get() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// TestConfigFollowsStored: the first process to use a quota stores its
// configuration; one built with other limits follows the stored ones
// (OnError hears of it once), and SetLimit in any process reaches the
// others at their next admission.
func TestConfigFollowsStored(t *testing.T) {
	srv := redistest.Start(t)
	hour := time.Hour
	a, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(4, hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 1, allowN(t, a, 1))
	conf, err := srv.Do("HGETALL", "rxthrottle:{q}:conf")
	require.NoError(t, err)
	assert.Equal(t, "4/3600000000", conf.(map[any]any)["l"])
	assert.Equal(t, "60000000", conf.(map[any]any)["h"], "the hold timeout is stored too")

	var errs errorLog
	b, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(50, hour), OnError(errs.hook), rxthrottle.WithSpacing(time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	assert.Equal(t, 3, allowN(t, b, 10), "the stored limit of 4, not its own 50")
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(4, hour)}, b.Limits())
	got := errs.get()
	require.Len(t, got, 1)
	require.ErrorIs(t, got[0], ErrConfigMismatch)
	assert.EqualError(t, got[0], "redisstore: rxthrottle:{q}:conf holds limits [4 per 1h0m0s], spacing 0s, hold timeout 1m0s, concurrency 0; "+
		"this process was built with limits [50 per 1h0m0s], spacing 1ms, hold timeout 1m0s, concurrency 0: configuration differs from the stored one (following the stored one)")

	// SetLimit in b: a's next admission runs under it (the schedule is
	// marked in the same script).
	require.NoError(t, b.SetLimit(rxthrottle.Per(6, hour)))
	assert.Equal(t, 2, allowN(t, a, 5), "6 in all")
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(6, hour)}, a.Limits())
	require.NoError(t, a.SetLimit(rxthrottle.Per(1, hour)))
	assert.Equal(t, 0, allowN(t, b, 1))
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(1, hour)}, b.Limits())
	assert.Len(t, errs.get(), 1, "a SetLimit is followed, not reported")

	// An invalid limit changes nothing, here or in Redis.
	require.ErrorIs(t, a.SetLimit(rxthrottle.Per(0, hour)), rxthrottle.ErrInvalidLimit)
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(1, hour)}, a.Limits())
}

// TestConfigStrict: WithStrictConfig refuses a stored configuration that
// differs from its own, saying both, and works once they agree.
func TestConfigStrict(t *testing.T) {
	srv := redistest.Start(t)
	a, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(4, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.NoError(t, a.Wait(context.Background()))

	b, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(5, time.Hour), WithStrictConfig(), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	err = b.Wait(context.Background())
	require.ErrorIs(t, err, ErrConfigMismatch)
	require.NotErrorIs(t, err, ErrStoreUnavailable, "not a failure of Redis: no FailurePolicy applies")
	assert.Contains(t, err.Error(), "holds limits [4 per 1h0m0s]")
	assert.Contains(t, err.Error(), "built with limits [5 per 1h0m0s]")
	_, err = b.Allow(context.Background())
	require.ErrorIs(t, err, ErrConfigMismatch)
	assert.Zero(t, b.Stats().Admitted)

	// A strict process built with the stored configuration joins, and
	// follows a later SetLimit.
	c, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(4, time.Hour), WithStrictConfig(), WithFailurePolicy(FailOpen), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.NoError(t, c.Wait(context.Background()))
	require.NoError(t, a.SetLimit(rxthrottle.Per(2, time.Hour)))
	assert.Equal(t, 0, allowN(t, c, 1))
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(2, time.Hour)}, c.Limits())
}

// TestConfigLost: a configuration hash that is deleted is stored again by
// the next process that reads it, with a larger version, so the schedules
// marked with the old one go on.
func TestConfigLost(t *testing.T) {
	srv := redistest.Start(t)
	a, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(3, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 1, allowN(t, a, 1))
	require.NoError(t, a.SetLimit(rxthrottle.Per(4, time.Hour))) // marks the schedule
	_, err = srv.Do("DEL", "rxthrottle:{q}:conf")
	require.NoError(t, err)

	b, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(4, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	assert.Equal(t, 3, allowN(t, b, 5), "b stores its configuration again, and is not refused as stale")
	v, err := srv.Do("HGET", "rxthrottle:{q}:conf", "l")
	require.NoError(t, err)
	assert.Equal(t, "4/3600000000", v)
}

// TestConfigKeyed: one configuration for every key of a Keyed limiter; a
// key that the SetLimit's process uses again is under the new limits at
// once for the others, any other key within confBound.
func TestConfigKeyed(t *testing.T) {
	srv := redistest.Start(t)
	a, err := NewKeyed(srv.Client(t), "users", rxthrottle.Per(10, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	b, err := NewKeyed(srv.Client(t), "users", rxthrottle.Per(10, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	for _, key := range []string{"x", "y"} {
		ok, err := b.Allow(context.Background(), key)
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.NoError(t, a.SetLimit(rxthrottle.Per(2, time.Hour)))
	ok, err := a.Allow(context.Background(), "x")
	require.NoError(t, err)
	require.True(t, ok, "2 of x")
	ok, err = b.Allow(context.Background(), "x")
	require.NoError(t, err)
	require.False(t, ok, "x is marked: b reads the new limits at once")
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(2, time.Hour)}, b.Limits())

	v, err := srv.Do("EXISTS", "rxthrottle:{users}:keyconf")
	require.NoError(t, err)
	assert.Equal(t, int64(1), v)
}

// TestConfigStoreDown: a process that cannot read the configuration
// (Redis down) applies its FailurePolicy, as for an admission.
func TestConfigStoreDown(t *testing.T) {
	b, err := NewBucket(nopClient(t), "q", rxthrottle.Per(1, time.Hour), WithRetryBackoff(0, 0), WithTimeout(50*time.Millisecond))
	require.NoError(t, err)
	err = b.Wait(context.Background())
	var serr *StoreError
	require.True(t, errors.As(err, &serr), "%v", err)
	assert.Equal(t, "admit", serr.Op, "reading the configuration is part of the admission")
	assert.Equal(t, "rxthrottle:{q}:done", serr.Key)

	open, err := NewBucket(nopClient(t), "q", rxthrottle.Per(1, time.Hour), WithFailurePolicy(FailOpen), WithTimeout(50*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, open.Wait(context.Background()))
	ok, err := open.Allow(context.Background())
	require.NoError(t, err)
	assert.True(t, ok)
	err = open.SetLimit(rxthrottle.Per(2, time.Hour))
	require.True(t, errors.As(err, &serr), "SetLimit cannot store the limits: %v", err)
	assert.Equal(t, "set limit", serr.Op)
	assert.Equal(t, "rxthrottle:{q}:conf", serr.Key)
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(1, time.Hour)}, open.Limits(), "and changes nothing")
}

// TestConfigConcurrency: the concurrency cap is stored with the quota: a
// process built without one follows the stored cap of 1, so its Acquire
// waits while another process holds the one token in flight.
func TestConfigConcurrency(t *testing.T) {
	srv := redistest.Start(t)
	a, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(10, time.Hour), rxthrottle.WithConcurrency(1), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	tok, err := a.Acquire(context.Background())
	require.NoError(t, err)
	defer tok.Release()

	b, err := NewBucket(srv.Client(t), "q", rxthrottle.Per(10, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = b.Acquire(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the stored cap of 1 is in flight in a")
	assert.Equal(t, 1, b.s.lim.Load().concurrency)
	require.NoError(t, b.Wait(context.Background()), "a Wait is never capped")
}
