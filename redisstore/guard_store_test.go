package redisstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/guard/storetest"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestGuardStoreSuite runs guard's own Store suite, to the nanosecond, on
// the caller's (virtual) time.
func TestGuardStoreSuite(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) guard.Store {
		// A prefix per subtest: each wants an empty store.
		s, err := NewGuardStore(c, fmt.Sprintf("suite%d", n.Add(1)), WithCallerTime())
		require.NoError(t, err)
		return s
	})
}

// TestGuardStoreRedisClock: on Redis's clock, a window's state expires with
// it, and a block's TTL is the block.
func TestGuardStoreRedisClock(t *testing.T) {
	srv := redistest.Start(t)
	s, err := NewGuardStore(srv.Client(t), "api")
	require.NoError(t, err)
	ctx := context.Background()
	p := guard.Policy{Limit: rxthrottle.Per(2, 40*time.Millisecond), Block: time.Hour}
	future := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) // ignored: Redis's clock decides

	r, err := s.Hit(ctx, "k", p, future)
	require.NoError(t, err)
	require.Equal(t, guard.Result{Allowed: true, Count: 1, Reset: 40 * time.Millisecond}, r)
	// -2ms: gone already (a loaded machine may take longer than the window
	// to ask), which it could only be with a TTL; -1ms would be no TTL.
	if ttl := pttl(t, srv, s.Key("k")); ttl != -2*time.Millisecond {
		require.Greater(t, ttl, time.Duration(0), "the state has a TTL")
		require.LessOrEqual(t, ttl, 40*time.Millisecond, "the state expires with its window")
	}
	require.Eventually(t, func() bool { return pttl(t, srv, s.Key("k")) == -2*time.Millisecond }, 30*time.Second, 5*time.Millisecond)

	// Three hits in one window, however slow the machine: a window of a
	// minute.
	p.Limit = rxthrottle.Per(2, time.Minute)
	for range 2 {
		r, err = s.Hit(ctx, "k", p, future)
		require.NoError(t, err)
		require.True(t, r.Allowed)
	}
	r, err = s.Hit(ctx, "k", p, future)
	require.NoError(t, err)
	require.True(t, r.Blocked)
	require.Equal(t, 3, r.Count)
	require.Greater(t, r.Reset, time.Hour-time.Second)
	require.LessOrEqual(t, r.Reset, time.Hour)
	ttl := pttl(t, srv, s.Key("k"))
	require.Greater(t, ttl, time.Hour-time.Minute, "a block's TTL is the block")
}

func TestGuardStoreErrors(t *testing.T) {
	_, err := NewGuardStore(nil, "a")
	require.EqualError(t, err, "redisstore: nil Redis client")
	_, err = NewGuardStore(nopClient(t), "")
	require.EqualError(t, err, "redisstore: empty key prefix: it names the Redis keys of the limiter")
	s, err := NewGuardStore(nopClient(t), "a", WithTimeout(100*time.Millisecond))
	require.NoError(t, err)
	ctx := context.Background()
	p := guard.Policy{Limit: rxthrottle.Per(1, time.Second)}
	_, err = s.Hit(ctx, "", p, time.Now())
	require.EqualError(t, err, "redisstore: GuardStore.Hit: empty key")
	_, err = s.Hit(ctx, "k", guard.Policy{}, time.Now())
	require.ErrorIs(t, err, guard.ErrInvalidPolicy)
	_, err = s.Hit(ctx, "k", p, time.Now())
	require.ErrorIs(t, err, ErrStoreUnavailable)
	require.ErrorContains(t, err, `redisstore: guard hit on key "rxthrottle:{a:k}:guard": redis store unavailable: `)
}

// TestGuardStoreCallerTimeSlowCaller: with the caller's time, a key's
// state lasts until the caller's clock passes its end, however slowly
// that clock runs against Redis's: a 3ns window whose next hit comes 1ns
// later on the caller's clock but 20ms later on Redis's still counts it.
// (The TTL was the Reset rounded to 1ms of Redis's time: the key was
// forgotten, and the suite's nanosecond case flaked on a loaded machine.)
func TestGuardStoreCallerTimeSlowCaller(t *testing.T) {
	srv := redistest.Start(t)
	s, err := NewGuardStore(srv.Client(t), "slow", WithCallerTime())
	require.NoError(t, err)
	ctx := context.Background()
	p := guard.Policy{Limit: rxthrottle.Per(2, 3), Block: 5}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	r, err := s.Hit(ctx, "a", p, at)
	require.NoError(t, err)
	require.Equal(t, 1, r.Count)
	time.Sleep(20 * time.Millisecond)
	r, err = s.Hit(ctx, "a", p, at.Add(1))
	require.NoError(t, err)
	require.Equal(t, 2, r.Count, "the window's first hit is remembered")
}
