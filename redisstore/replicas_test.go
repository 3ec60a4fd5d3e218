package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestReplicaAckErrors: bad arguments, a call timeout it cannot fit in,
// and a client it cannot pin a connection of, are errors at construction.
func TestReplicaAckErrors(t *testing.T) {
	c := nopClient(t)
	limit := rxthrottle.Per(1, time.Second)
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithReplicaAck(0, time.Second)}, "redisstore: WithReplicaAck(0, 1s): want at least 1 replica"},
		{[]Option{WithReplicaAck(-1, time.Second)}, "redisstore: WithReplicaAck(-1, 1s): want at least 1 replica"},
		{[]Option{WithReplicaAck(1, 0)}, "redisstore: WithReplicaAck(1, 0s): want a timeout of 1ms or more (WAIT 0 would wait forever)"},
		{[]Option{WithReplicaAck(1, time.Microsecond)}, "redisstore: WithReplicaAck(1, 1µs): want a timeout of 1ms or more (WAIT 0 would wait forever)"},
		{[]Option{WithReplicaAck(1, time.Second), WithTimeout(time.Second)}, "redisstore: WithReplicaAck(1, 1s): the wait must be shorter than the call timeout, 1s (WithTimeout, or DefaultTimeout), which bounds the whole call"},
		{[]Option{WithReplicaAck(1, time.Second)}, "redisstore: WithReplicaAck(1, 1s): the wait must be shorter than the call timeout, 500ms (WithTimeout, or DefaultTimeout), which bounds the whole call"},
	} {
		b, err := NewBucket(c, "b", limit, tc.opts...)
		require.EqualError(t, err, tc.want)
		require.Nil(t, b)
		k, err := NewKeyed(c, "k", limit, tc.opts...)
		require.EqualError(t, err, tc.want)
		require.Nil(t, k)
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	t.Cleanup(func() { _ = ring.Close() })
	_, err := NewBucket(ring, "b", limit, WithReplicaAck(1, 100*time.Millisecond))
	require.EqualError(t, err, "redisstore: WithReplicaAck(1, 100ms) needs a *redis.Client or a *redis.ClusterClient, not a *redis.Ring")
	_, err = NewGuardStore(c, "g", WithReplicaAck(1, 100*time.Millisecond))
	require.EqualError(t, err, "redisstore: NewGuardStore does not read redisstore.WithReplicaAck")
	cc := redistest.NewClusterClient("127.0.0.1:1")
	t.Cleanup(func() { _ = cc.Close() })
	_, err = NewBucket(cc, "b", limit, WithReplicaAck(1, time.Second), WithTimeout(2*time.Second))
	require.NoError(t, err)
}

// TestReplicaAck: on a master with a replica, admissions go and are on
// the replica when the caller goes; with the replica gone, WAIT times out
// and the caller is refused (FailClosed) with an error wrapping
// ErrNotReplicated and ErrStoreUnavailable, its token kept counted in
// Redis; with the replica back, callers go again. Without the option the
// same master admits, replica or not.
func TestReplicaAck(t *testing.T) {
	if redistest.ClusterMode() {
		t.Skip("a plain master and its replica; TestFailover runs it on a cluster")
	}
	srv := redistest.Start(t)
	replica := redistest.StartReplica(t, srv)
	ctx := context.Background()
	var log errorLog
	b, err := NewBucket(srv.Client(t), "ack", rxthrottle.Per(100, time.Hour),
		WithReplicaAck(1, 500*time.Millisecond), WithTimeout(2*time.Second), WithRetryBackoff(time.Millisecond, time.Millisecond), OnError(log.hook))
	require.NoError(t, err)
	plain, err := NewBucket(srv.Client(t), "ack", rxthrottle.Per(100, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)

	for range 3 {
		require.NoError(t, b.Wait(ctx))
	}
	// What the callers went on is on the replica already.
	require.Len(t, scores(t, replica, b.keys[0]), 3)

	replica.Stop()
	err = b.Wait(ctx)
	require.ErrorIs(t, err, ErrNotReplicated)
	require.ErrorIs(t, err, ErrStoreUnavailable)
	var serr *StoreError
	require.True(t, errors.As(err, &serr))
	require.Equal(t, "admit", serr.Op)
	require.ErrorContains(t, err, "WAIT 1 500: 0 acknowledged")
	require.Equal(t, 1, log.len(), "OnError hears of it: %v", log.errs)
	require.Len(t, scores(t, srv, b.keys[0]), 4, "the refused caller's token stays counted")
	require.NoError(t, plain.Wait(ctx), "without the option the master admits alone")

	replica = redistest.StartReplica(t, srv)
	require.Eventually(t, func() bool { return b.Wait(ctx) == nil }, 10*time.Second, 5*time.Millisecond)
	require.Len(t, scores(t, replica, b.keys[0]), len(scores(t, srv, b.keys[0])))
}
