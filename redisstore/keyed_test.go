package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyedIndependentSchedules: each key keeps SPEC.md's schedule over its
// own callers; a busy key never delays another.
func TestKeyedIndependentSchedules(t *testing.T) {
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "users", rxthrottle.Per(2, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	for _, key := range []string{"a", "a", "b"} {
		require.NoError(t, k.Wait(ctx, key))
	}
	for i, step := range []struct {
		key  string
		want bool
	}{{"a", false}, {"b", true}, {"b", false}, {"c", true}} {
		ok, err := k.Allow(ctx, step.key)
		require.NoError(t, err)
		require.Equal(t, step.want, ok, "step %d: Allow(%q)", i, step.key)
	}
	require.Len(t, scores(t, srv, k.Keys("a")[0]), 2)
	st := k.Stats()
	assert.Equal(t, uint64(5), st.Admitted)
}

// TestKeyedPauseAndCancel: a pause holds one key only, and a cancelled wait
// gives its key's slot back.
func TestKeyedPauseAndCancel(t *testing.T) {
	srv := redistest.Start(t)
	clk := newSignalClock()
	k, err := NewKeyed(srv.Client(t), "users", rxthrottle.Per(5, time.Second), WithClock(clk), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	clk.watch(k.s)
	ctx := context.Background()
	k.Pause("a", clk.Now().Add(time.Hour))
	k.Pause("", clk.Now().Add(time.Hour)) // ignored
	ok, err := k.Allow(ctx, "b")
	require.NoError(t, err)
	require.True(t, ok, "b is not paused")

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- k.Wait(cctx, "a") }()
	d := clk.nextTimer(t)
	require.Greater(t, d, time.Hour-time.Minute, "a waits for its pause")
	require.Len(t, scores(t, srv, k.Keys("a")[0]), 1)
	cancel()
	require.ErrorIs(t, recv(t, done), context.Canceled)
	require.Empty(t, scores(t, srv, k.Keys("a")[0]), "the only reservation of a was given back")
}

func TestKeyedBadInput(t *testing.T) {
	ok := rxthrottle.Per(1, time.Second)
	for _, tc := range []struct {
		prefix string
		limit  rxthrottle.Limit
		want   string
	}{
		{"", ok, "redisstore: empty key prefix"},
		{"a}", ok, `redisstore: key prefix "a}" contains '{' or '}'`},
		{"a", rxthrottle.Per(0, time.Second), "redisstore: limit #1 (0 per 1s): N must be at least 1: invalid limit"},
	} {
		k, err := NewKeyed(nopClient(t), tc.prefix, tc.limit)
		require.Nil(t, k)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := NewKeyed(nil, "a", ok)
	require.EqualError(t, err, "redisstore: nil Redis client")

	k, err := NewKeyed(nopClient(t), "a", ok)
	require.NoError(t, err)
	require.EqualError(t, k.Wait(context.Background(), ""), "redisstore: empty key")
	_, err = k.Allow(context.Background(), "")
	require.EqualError(t, err, "redisstore: empty key")
	// Arguments in their order (SPEC.md, "Cancellation"), as the root's
	// Keyed: a nil context before an empty key, an empty key before a
	// cost out of range, all before an ended context.
	//lint:ignore SA1012 a nil context is what this checks
	require.ErrorIs(t, k.WaitN(nil, "", 0), errNilContext) //nolint:staticcheck
	//lint:ignore SA1012 a nil context is what this checks
	_, err = k.AcquireN(nil, "", 0) //nolint:staticcheck
	require.ErrorIs(t, err, errNilContext)
	//lint:ignore SA1012 a nil context is what this checks
	_, err = k.AllowN(nil, "", 0) //nolint:staticcheck
	require.ErrorIs(t, err, errNilContext)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, k.WaitN(ended, "", 0), errEmptyKey)
	_, err = k.AllowN(ended, "", 0)
	require.ErrorIs(t, err, errEmptyKey)
}

// TestKeyedRestartFallbackLocal: during an outage each key falls back to
// its own local schedule, and the error names the key's Redis key.
func TestKeyedRestartFallbackLocal(t *testing.T) {
	srv := redistest.Start(t)
	var log errorLog
	clk := clock.NewMock()
	k, err := NewKeyed(srv.Client(t), "users", rxthrottle.Per(1, time.Hour),
		WithFailurePolicy(FallbackLocal), WithClock(clk), OnError(log.hook), WithRetryBackoff(time.Minute, time.Minute), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	srv.Stop()
	require.NoError(t, k.Wait(ctx, "a"))
	var serr *StoreError
	require.ErrorAs(t, log.errs[0], &serr)
	require.Equal(t, "rxthrottle:{users:a}:done", serr.Key)
	clk.Add(time.Minute) // the back-off ends: the next call probes
	require.NoError(t, k.Wait(ctx, "b"), "keys stay independent locally")
	ok, err := k.Allow(ctx, "a")
	require.NoError(t, err)
	require.False(t, ok, "a's local token is used")
	require.Equal(t, 2, log.len(), "two calls failed, the third was kept back")
	require.ErrorAs(t, log.errs[1], &serr)
	require.Equal(t, "rxthrottle:{users:b}:done", serr.Key)

	srv.Start()
	clk.Add(time.Minute)
	require.Eventually(t, func() bool {
		ok, err := k.Allow(ctx, "a")
		return err == nil && ok
	}, 30*time.Second, time.Millisecond, "a is admitted by the (empty) Redis again")
}
