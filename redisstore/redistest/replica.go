package redistest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartReplica starts a plain server for tb that replicates master
// (REPLICAOF) and waits until its link is up and its first sync is done;
// it fails the test after 30 seconds. It is stopped when tb ends. Redis
// replicates asynchronously: a write the master acknowledged may not have
// reached it yet.
func StartReplica(tb testing.TB, master *Server) *Server {
	tb.Helper()
	// The first sync starts at once, not 5s later (Redis 7's default
	// for diskless sync).
	if _, err := master.Do("CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
		tb.Fatalf("redistest: CONFIG SET repl-diskless-sync-delay: %v", err)
	}
	r := StartWith(tb, "--repl-diskless-load", "swapdb", "--dir", tb.TempDir())
	if _, err := r.Do("REPLICAOF", "127.0.0.1", master.port); err != nil {
		tb.Fatalf("redistest: REPLICAOF: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// In sync when the master counts it online (WAIT counts only
		// those) and it acknowledges a write at once (just after its
		// first sync it answers the master's GETACK only a little
		// later).
		info, err := master.Do("INFO", "replication")
		if err == nil && strings.Contains(fmt.Sprint(info), fmt.Sprintf("port=%d,state=online", r.port)) && acks(master) {
			return r
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: replica %d of %d not in sync within 30s: %v %v", r.port, master.port, info, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// acks reports whether a write on master (a key of redistest's own, then
// deleted) reaches a replica within 100ms, as WAIT counts on the
// connection that wrote it.
func acks(master *Server) bool {
	c := redis.NewClient(&redis.Options{Addr: master.Addr(), MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n *redis.Cmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "redistest:replica-sync", 1, 0)
		p.Del(ctx, "redistest:replica-sync")
		n = p.Do(ctx, "WAIT", 1, 100)
		return nil
	})
	v, _ := n.Int64()
	return err == nil && v == 1
}
