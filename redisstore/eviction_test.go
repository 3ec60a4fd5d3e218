package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestEvictionPolicyReported: on its first call that Redis answers, a
// limiter reports once (OnError, wrapping ErrEvictionPolicy) a server whose
// maxmemory-policy may evict its keys, and nothing for a server that cannot
// evict them. Under allkeys-lru or volatile-lru an evicted schedule gave a
// whole new quota, unreported.
func TestEvictionPolicyReported(t *testing.T) {
	// 8mb: a node of a Redis Cluster (RXTHROTTLE_REDIS_CLUSTER=1) uses
	// about 2 MB of its own.
	srv := redistest.StartWith(t, "--maxmemory", "8mb", "--maxmemory-policy", "allkeys-lru")
	ctx := context.Background()
	for i, c := range []struct {
		policy, maxmemory string
		report            bool
	}{
		{"allkeys-lru", "8mb", true},
		{"volatile-lru", "8mb", true},
		{"volatile-ttl", "8mb", true},
		{"allkeys-random", "8mb", true},
		{"noeviction", "8mb", false},
		{"allkeys-lru", "0", false}, // no memory limit: nothing is evicted
	} {
		_, err := srv.Do("CONFIG", "SET", "maxmemory-policy", c.policy, "maxmemory", c.maxmemory)
		require.NoError(t, err)
		var log errorLog
		b, err := NewBucket(srv.Client(t), "evict", rxthrottle.Per(100, time.Second), OnError(log.hook), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		k, err := NewKeyed(srv.Client(t), "evict", rxthrottle.Per(100, time.Second), OnError(log.hook), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		for range 3 {
			require.NoError(t, b.Wait(ctx))
			_, err := k.Allow(ctx, "x")
			require.NoError(t, err)
		}
		err = CheckServer(ctx, srv.Client(t))
		if !c.report {
			require.Zero(t, log.len(), "case %d: %s: %v", i, c.policy, log.errs)
			require.NoError(t, err)
			continue
		}
		require.Equal(t, 2, log.len(), "case %d: %s: once per limiter", i, c.policy)
		for _, err := range append(log.errs, err) {
			require.ErrorIs(t, err, ErrEvictionPolicy)
			require.False(t, errors.Is(err, ErrStoreUnavailable), "Redis answered: it is not unavailable")
			require.ErrorContains(t, err, "redisstore: the server may evict the limiter's keys: maxmemory-policy is "+c.policy+" with maxmemory ")
		}
	}
}

// TestEvictionCheckWithoutConfig: a server that refuses CONFIG (managed
// services often do) is not reported, and CheckServer says it cannot tell.
func TestEvictionCheckWithoutConfig(t *testing.T) {
	srv := redistest.StartWith(t, "--rename-command", "CONFIG", "")
	var log errorLog
	b, err := NewBucket(srv.Client(t), "evict", rxthrottle.Per(100, time.Second), OnError(log.hook), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, b.Wait(context.Background()))
	}
	require.Zero(t, log.len(), "%v", log.errs)
	require.True(t, b.s.evict.done.Load(), "a refusal is an answer: no check on later calls")
	err = CheckServer(context.Background(), srv.Client(t))
	require.ErrorContains(t, err, "redisstore: cannot check the server's eviction policy: ")
	require.False(t, errors.Is(err, ErrEvictionPolicy))

	require.ErrorContains(t, CheckServer(context.Background(), &fakeRedis{}), "cannot run CONFIG GET")
}
