package redistest

// A Cluster's nodes by slot (MasterOf, ReplicaOf, KeySlot), a manual
// failover, and commands run on the nodes that serve them (Do).

import (
	"fmt"
	"strconv"
	"strings"
)

// MasterOf returns the running node that serves key's slot, as that node
// itself sees it; it fails the test if none does.
func (c *Cluster) MasterOf(key string) *Server {
	c.tb.Helper()
	slot := KeySlot(key)
	for _, n := range c.Running() {
		if n.ownsSlot(slot) {
			return n
		}
	}
	c.tb.Fatalf("redistest: no running node serves slot %d (key %q)", slot, key)
	return nil
}

// ownsSlot reports whether the node claims slot as its own (the "myself"
// line of its CLUSTER NODES).
func (s *Server) ownsSlot(slot int) bool {
	v, err := s.Do("CLUSTER", "NODES")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(fmt.Sprint(v), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.Contains(f[2], "myself") || !strings.Contains(f[2], "master") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, _ := strings.Cut(r, "-")
			if hi == "" {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && l <= slot && slot <= h {
				return true
			}
		}
	}
	return false
}

// ReplicaOf returns the running replica of master; it fails the test if
// there is none.
func (c *Cluster) ReplicaOf(master *Server) *Server {
	c.tb.Helper()
	for _, n := range c.Running() {
		role, err := n.Do("ROLE")
		if err != nil {
			continue
		}
		if r := role.([]any); r[0] == "slave" && fmt.Sprint(r[2]) == strconv.Itoa(master.port) {
			return n
		}
	}
	c.tb.Fatalf("redistest: master %d has no running replica", master.port)
	return nil
}

// Failover makes the replica of key's master take over with CLUSTER
// FAILOVER (the manual failover: the master stops its clients until the
// replica has caught up, so nothing acknowledged is lost), waits until the
// replica serves the slot, and returns it.
func (c *Cluster) Failover(key string) *Server {
	c.tb.Helper()
	r := c.ReplicaOf(c.MasterOf(key))
	c.must(r, "CLUSTER", "FAILOVER")
	c.WaitServed(key, r)
	return r
}

// KeySlot is Redis Cluster's HASH_SLOT of key: CRC16 (XMODEM) of the part
// between the first '{' and the next '}' if that part is not empty, of the
// whole key otherwise, modulo 16384.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % 16384)
}

// doOn runs one command on the cluster's node that serves key.
func (c *Cluster) doOn(key string, args ...any) (any, error) {
	c.tb.Helper()
	return c.MasterOf(key).Do(args...)
}

// Do runs one command on the cluster, for test setup and inspection: a
// command about keys (ZRANGE, PTTL, EXISTS of keys of one slot, OBJECT
// ENCODING) on the master that serves its first key; a command about the
// server (SCRIPT, CONFIG, CLIENT, FLUSHALL) on every running master, with
// the first master's answer (SCRIPT EXISTS: a script counts as loaded if
// any master has it, since each master loads it when a key of its own
// first needs it).
func (c *Cluster) Do(args ...any) (any, error) {
	c.tb.Helper()
	if len(args) == 0 {
		return nil, fmt.Errorf("redistest: Do with no command")
	}
	name := strings.ToUpper(fmt.Sprint(args[0]))
	switch name {
	case "SCRIPT", "CONFIG", "CLIENT", "FLUSHALL", "FLUSHDB", "DEBUG":
		return c.doOnMasters(name, args)
	case "OBJECT", "MEMORY":
		if len(args) > 2 {
			return c.doOn(fmt.Sprint(args[2]), args...)
		}
	case "CLUSTER", "PING", "TIME", "INFO":
		if run := c.Running(); len(run) > 0 {
			return run[0].Do(args...)
		}
		return nil, fmt.Errorf("redistest: Do(%v): no node is running", args)
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("redistest: Do(%v): which node should run it on a cluster?", args)
	}
	return c.doOn(fmt.Sprint(args[1]), args...)
}

// doOnMasters runs a server command on every running master.
func (c *Cluster) doOnMasters(name string, args []any) (any, error) {
	var first any
	for _, n := range c.Running() {
		if role, err := n.Do("ROLE"); err != nil || role.([]any)[0] != "master" {
			continue
		}
		v, err := n.Do(args...)
		if err != nil {
			return v, err
		}
		if first == nil {
			first = v
			continue
		}
		if name == "SCRIPT" && strings.EqualFold(fmt.Sprint(args[1]), "EXISTS") {
			all, _ := first.([]any)
			more, _ := v.([]any)
			for j := range min(len(all), len(more)) {
				if more[j] == int64(1) {
					all[j] = int64(1)
				}
			}
		}
	}
	return first, nil
}
