package integration_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
	"github.com/rxthrottle/rxthrottle/redisstore"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// TestCollectorRedis exports the Redis limiters through the same methods as
// the in-memory ones: AddLimiter takes any rxthrottle.Limiter and AddKeyed
// any rxthrottle.KeyedLimiter. Three callers of an hour's quota of 2 on a
// real redis-server: 2 admitted at once, and the third gives up.
func TestCollectorRedis(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	c, err := rxprom.NewCollector()
	require.NoError(t, err)
	b, err := redisstore.NewBucket(rdb, "rxprom-test", rxthrottle.Per(2, time.Hour))
	require.NoError(t, err)
	kl, err := redisstore.NewKeyed(rdb, "rxprom-test-keyed", rxthrottle.Per(2, time.Hour))
	require.NoError(t, err)
	require.NoError(t, c.AddLimiter("shared", b))
	require.NoError(t, c.AddKeyed("shared-users", kl))

	for range 2 {
		require.NoError(t, b.Wait(t.Context()))
		require.NoError(t, kl.Wait(t.Context(), "alice"))
	}
	ok, err := b.Allow(t.Context())
	require.NoError(t, err)
	assert.False(t, ok, "the quota is spent for an hour")

	got := exposition(t, c)
	for _, line := range []string{
		`rxthrottle_admitted_total{limiter="shared"} 2`,
		`rxthrottle_free_tokens{limiter="shared"} 0`,
		`rxthrottle_admitted_total{limiter="shared-users"} 2`,
		`rxthrottle_queued{limiter="shared-users"} 0`,
	} {
		assert.Contains(t, got, "\n"+line+"\n")
	}
	assert.Contains(t, got, `rxthrottle_keys_live{limiter="shared-users"}`)
}

// TestObserveWaitRedis: rxprom.ObserveWait is the OnAdmit hook of a shared
// quota as of an in-memory one: two callers of a quota of 2 an hour go at
// once (waits of 0), the third waits its hour (less the real time since
// the first, on Redis's clock) on the limiter's virtual clock, and its wait
// reaches the histogram.
func TestObserveWaitRedis(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	c, err := rxprom.NewCollector(rxprom.WithBuckets(0, 60))
	require.NoError(t, err)
	mock := clock.NewMock()
	waiting := make(chan struct{}, 1)
	b, err := redisstore.NewBucket(rdb, "rxprom-wait", rxthrottle.Per(2, time.Hour),
		rxthrottle.WithClock(mock),
		rxthrottle.OnWait(func(rxthrottle.Event) { waiting <- struct{}{} }),
		rxthrottle.OnAdmit(observeWait(t, c, "shared")))
	require.NoError(t, err)
	require.NoError(t, c.AddLimiter("shared", b))
	for range 2 {
		require.NoError(t, b.Wait(t.Context()))
	}
	done := make(chan error, 1)
	go func() { done <- b.Wait(t.Context()) }()
	<-waiting
	// The caller makes its timer after OnWait: move the clock until it
	// fires (each step an hour, so the wait is at least one).
	for waited := false; !waited; {
		select {
		case err := <-done:
			require.NoError(t, err)
			waited = true
		case <-time.After(10 * time.Millisecond):
			mock.Add(time.Hour)
		}
	}

	got := exposition(t, c)
	for _, line := range []string{
		`rxthrottle_wait_seconds_bucket{limiter="shared",le="0"} 2`,
		`rxthrottle_wait_seconds_bucket{limiter="shared",le="60"} 2`, // the third waited most of an hour
		`rxthrottle_wait_seconds_bucket{limiter="shared",le="+Inf"} 3`,
		`rxthrottle_wait_seconds_count{limiter="shared"} 3`,
		`rxthrottle_waited_total{limiter="shared"} 1`,
	} {
		assert.Contains(t, got, "\n"+line+"\n")
	}
}
