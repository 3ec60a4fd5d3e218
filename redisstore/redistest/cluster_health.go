package redistest

// Waiting for a Cluster to converge: WaitFor, WaitHealthy, WaitServed.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// WaitFor polls check until it returns nil, and fails the test with its
// last error if that takes more than 30 seconds (a cluster converges
// through gossip, in about a second on an idle machine; a Sentinel
// promotes a replica in about as long).
func WaitFor(tb testing.TB, what string, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: %s: not within 30s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitHealthy waits until every running node reports cluster_state:ok and
// the same three masters owning all the slots, and every running replica's
// link to its master is up; it fails the test after 30 seconds.
func (c *Cluster) WaitHealthy() {
	c.tb.Helper()
	WaitFor(c.tb, "healthy", func() error {
		var want []string
		for _, n := range c.Running() {
			info, err := n.Do("CLUSTER", "INFO")
			if err != nil {
				return err
			}
			if !strings.Contains(fmt.Sprint(info), "cluster_state:ok") {
				return fmt.Errorf("node %d: %v", n.port, info)
			}
			view, err := n.Do("CLUSTER", "SLOTS")
			if err != nil {
				return err
			}
			got := slotOwners(view)
			if want == nil {
				want = got
			} else if !slices.Equal(got, want) {
				return fmt.Errorf("node %d sees the slots owned by %v, another %v", n.port, got, want)
			}
			role, err := n.Do("ROLE")
			if err != nil {
				return err
			}
			if r := role.([]any); r[0] == "slave" && r[3] != "connected" {
				return fmt.Errorf("replica %d: link to its master %v", n.port, r[3])
			}
		}
		if len(want) != clusterMasters {
			return fmt.Errorf("the slots are owned by %v, want %d masters", want, clusterMasters)
		}
		return nil
	})
}

// slotOwners returns the "range@port" of each slot range in a CLUSTER SLOTS
// reply, sorted.
func slotOwners(v any) []string {
	var out []string
	for _, r := range v.([]any) {
		r := r.([]any)
		master := r[2].([]any)
		out = append(out, fmt.Sprintf("%v-%v@%v", r[0], r[1], master[1]))
	}
	slices.Sort(out)
	return out
}

// WaitServed waits until node serves key's slot and the other running
// nodes agree; it fails the test after 30 seconds.
func (c *Cluster) WaitServed(key string, node *Server) {
	c.tb.Helper()
	slot := KeySlot(key)
	WaitFor(c.tb, fmt.Sprintf("node %d serves slot %d", node.port, slot), func() error {
		if !node.ownsSlot(slot) {
			return fmt.Errorf("node %d does not serve slot %d yet", node.port, slot)
		}
		for _, n := range c.Running() {
			v, err := n.Do("CLUSTER", "SLOTS")
			if err != nil {
				return err
			}
			if owner := ownerIn(v, slot); owner != node.port {
				return fmt.Errorf("node %d sees slot %d served by %d", n.port, slot, owner)
			}
		}
		return nil
	})
}

// ownerIn returns the port of the master of slot in a CLUSTER SLOTS reply,
// or 0.
func ownerIn(v any, slot int) int {
	for _, r := range v.([]any) {
		r := r.([]any)
		if lo, hi := r[0].(int64), r[1].(int64); int64(slot) >= lo && int64(slot) <= hi {
			p, _ := r[2].([]any)[1].(int64)
			return int(p)
		}
	}
	return 0
}
