package redistest

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"
)

// TestCloseClientEndsTheDialRetry: a client whose server stopped has
// failed enough dials that its pool redials in a goroutine of its own
// (go-redis's tryDial, once a second); CloseClient returns once that
// goroutine has ended, not merely once the pool is closed, so goleak finds
// nothing after it. With Close alone it is still there (sleeping out its
// second). In cluster mode (ClusterEnv) for every node's pool.
func TestCloseClientEndsTheDialRetry(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	// A pool starts tryDial once PoolSize dials have failed (10 per CPU).
	for range 20 * runtime.GOMAXPROCS(0) {
		_ = c.Ping(ctx).Err()
	}
	if !tryDialRunning() {
		t.Fatal("no tryDial running after the failed dials: the test proves nothing")
	}
	CloseClient(t, c)
	if tryDialRunning() {
		t.Fatal("tryDial still runs after CloseClient")
	}
}

// tryDialRunning reports whether a go-redis pool's tryDial runs (no other
// test of this package runs beside this one).
func tryDialRunning() bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("pool.(*ConnPool).tryDial"))
}

// TestCloseClientTakesFailoverClients: CloseClient closes the clients of
// NewFailoverClient and NewFailoverClusterClient (a test that kills a
// master, whose client redials the dead node), which it refused as not
// redistest's: such a test slept out go-redis's redial instead.
func TestCloseClientTakesFailoverClients(t *testing.T) {
	s := Start(t)
	if !ClusterMode() {
		sentinel := StartSentinel(t, s, time.Second)
		c := NewFailoverClient(sentinel.Addr())
		if err := c.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		CloseClient(t, c)
	}
	c := NewFailoverClusterClient(s.Addr())
	_ = c.Ping(context.Background()).Err() // a plain server refuses CLUSTER SLOTS: it dialed all the same
	CloseClient(t, c)
}
