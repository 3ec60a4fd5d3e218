package rxprom_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/redistest"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
	"github.com/rxthrottle/rxthrottle/redisstore"
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
