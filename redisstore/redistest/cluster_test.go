package redistest

import (
	"context"
	"testing"
	"time"
)

// TestReplicatedCluster forms a cluster, writes a key through a cluster
// client, fails its master over by hand and then by killing the new
// master, and reads the key back each time.
func TestReplicatedCluster(t *testing.T) {
	start := time.Now()
	c := StartReplicatedCluster(t, ClusterOptions{NodeTimeout: 500 * time.Millisecond})
	t.Logf("formed in %v", time.Since(start))
	cc := c.Client(t)
	ctx := context.Background()
	for _, key := range []string{"a", "b", "c", "{x}y"} {
		if err := cc.Set(ctx, key, key, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", key, err)
		}
	}
	if got := KeySlot("foo"); got != 12182 {
		t.Fatalf("KeySlot(foo) = %d, want 12182 (CLUSTER KEYSLOT foo)", got)
	}
	old := c.MasterOf("a")
	start = time.Now()
	r := c.Failover("a")
	t.Logf("manual failover in %v", time.Since(start))
	if r == old || c.MasterOf("a") != r {
		t.Fatalf("after the failover, key a is served by %d, want %d", c.MasterOf("a").port, r.port)
	}
	if v, err := cc.Get(ctx, "a").Result(); err != nil || v != "a" {
		t.Fatalf("GET a after the manual failover = %q, %v", v, err)
	}
	next := c.ReplicaOf(r)
	if next != old {
		t.Fatalf("the old master %d should be the new one's replica, got %d", old.port, next.port)
	}
	start = time.Now()
	r.Stop()
	c.WaitServed("a", old)
	t.Logf("failover after a kill in %v", time.Since(start))
	// The client finds the new master on its next reload of the slots.
	cc.ReloadState(ctx)
	if v, err := cc.Get(ctx, "a").Result(); err != nil || v != "a" {
		t.Fatalf("GET a after the kill = %q, %v", v, err)
	}
	r.Start()
	c.WaitHealthy()
	if c.ReplicaOf(old) != r {
		t.Fatal("the killed master should come back as a replica")
	}
	v, err := c.Do("GET", "b")
	if err != nil || v != "b" {
		t.Fatalf("Do(GET b) = %v, %v", v, err)
	}
	if _, err := c.Do("SCRIPT", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	start = time.Now()
	c.Start()
	t.Logf("restarted in %v", time.Since(start))
	if n, err := cc.Exists(ctx, "a").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS a after a restart without persistence = %v, %v", n, err)
	}
}
