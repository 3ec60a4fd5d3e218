package redisstore

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// drained waits until no call of s is in flight (the calls a hung server
// held have returned), so that no goroutine outlives the test.
func drained(t *testing.T, s *schedule) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.group.mu.Lock()
		defer s.group.mu.Unlock()
		return !flyingLocked(&s.group)
	}, 40*time.Second, 10*time.Millisecond, "calls still in flight")
}

// TestHungServerWithDefaultClient (issue 17, item 4): with a go-redis
// client built with its defaults (ContextTimeoutEnabled false, which
// ignores a context's deadline on the socket) and a server that hangs
// (SIGSTOP), a Wait returns when its context ends and a Release within
// its bound, not after the client's ReadTimeout (5 min here; they took
// the whole 5 s of the review's client). The bounds asserted (30 s) are
// far from both figures, so that load cannot break them.
func TestHungServerWithDefaultClient(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: 5 * time.Minute, WriteTimeout: 5 * time.Minute})
	t.Cleanup(func() { _ = rdb.Close() })
	b, err := NewBucket(rdb, "hang", rxthrottle.Per(10, time.Hour), WithRetryBackoff(0, 0))
	require.NoError(t, err)
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)

	srv.Signal(syscall.SIGSTOP)
	resumed := false
	defer func() {
		if !resumed {
			srv.Signal(syscall.SIGCONT)
		}
	}()
	start := time.Now()
	tok.Release()
	took := time.Since(start)
	require.Less(t, took, 30*time.Second, "Release is bounded by the call timeout")
	t.Logf("Release returned after %v", took)

	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = b.Wait(wctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	took = time.Since(start)
	require.Less(t, took, 30*time.Second, "Wait returns when its context ends")
	t.Logf("a Wait of 100ms returned after %v", took)

	start = time.Now()
	err = b.Wait(ctx)
	require.ErrorIs(t, err, ErrStoreUnavailable, "a call the server does not answer is a store failure")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	took = time.Since(start)
	require.Less(t, took, 30*time.Second, "DefaultTimeout bounds a call without a deadline")
	t.Logf("a Wait without a deadline returned after %v (DefaultTimeout %v)", took, DefaultTimeout)

	srv.Signal(syscall.SIGCONT)
	resumed = true
	drained(t, b.s)
	require.NoError(t, b.Wait(ctx), "back on Redis")
}

// TestFirstOutageCallBounded (issue 17, item 9): the first call of an
// outage fails after DefaultTimeout (500ms), not after the client's dial
// attempts: here a dialer that hangs for 5 min (go-redis's defaults
// against a refused port took about 1.7 s); then the breaker answers at
// once.
func TestFirstOutageCallBounded(t *testing.T) {
	release := make(chan struct{})
	rdb := redis.NewClient(&redis.Options{
		Addr: "127.0.0.1:1",
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			select {
			case <-release:
			case <-time.After(5 * time.Minute):
			}
			return nil, errors.New("no server")
		},
		DialerRetries: 1,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	b, err := NewBucket(rdb, "outage", rxthrottle.Per(10, time.Second))
	require.NoError(t, err)
	start := time.Now()
	err = b.Wait(context.Background())
	took := time.Since(start)
	require.ErrorIs(t, err, ErrStoreUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, took, 30*time.Second, "bounded by DefaultTimeout, not by the dialer")
	t.Logf("the first call of the outage failed after %v (DefaultTimeout %v)", took, DefaultTimeout)
	err = b.Wait(context.Background())
	require.ErrorIs(t, err, ErrCircuitOpen)
	close(release)
	drained(t, b.s)
}
