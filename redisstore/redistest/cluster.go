package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterOptions configures StartReplicatedCluster.
type ClusterOptions struct {
	// NodeTimeout is cluster-node-timeout: how long a master may be
	// unreachable before its replica takes over. 0 means 5s, longer than
	// any stall a loaded machine or a test's SIGSTOP causes, so that no
	// failover happens unless the test makes one.
	NodeTimeout time.Duration
	// Persistent gives every node an append-only file in a directory of
	// its own, fsynced before each reply (as StartPersistent), so a node
	// that is killed and restarted keeps what it acknowledged.
	Persistent bool
	// Args are more redis-server arguments for every node.
	Args []string
}

// Cluster is a Redis Cluster of three masters, each with one replica, on
// loopback: the slots split in three ranges (0-5460, 5461-10922,
// 10923-16383), as redis-cli --cluster create splits them. Its nodes are
// Servers: a test may stop, restart or freeze any of them. Writes reach a
// replica asynchronously, as in any Redis Cluster.
type Cluster struct {
	tb    testing.TB
	nodes []*Server // masters first, then their replicas in the same order
}

// clusterMasters is the number of masters of a Cluster; each has one
// replica.
const clusterMasters = 3

// StartReplicatedCluster starts a Cluster for tb and waits until every node
// agrees on the slots and every replica is in sync with its master. It
// skips tb (fails it, with RXTHROTTLE_REQUIRE_REDIS=1) when redis-server is
// not on PATH. The nodes are stopped when tb ends.
func StartReplicatedCluster(tb testing.TB, opts ClusterOptions) *Cluster {
	tb.Helper()
	timeout := opts.NodeTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	c := &Cluster{tb: tb}
	for range 2 * clusterMasters {
		bin, _ := prepare(tb)
		port, err := freeClusterPort()
		if err != nil {
			tb.Fatalf("redistest: no free port for a cluster node: %v", err)
		}
		dir := tb.TempDir()
		args := []string{
			"--cluster-node-timeout", strconv.FormatInt(timeout.Milliseconds(), 10),
			// A replica's first sync starts at once, not 5s later
			// (Redis 7's default for diskless sync).
			"--repl-diskless-sync-delay", "0",
			// Each node works in a directory of its own: a replica
			// that loads a sync through a file writes it there.
			"--dir", dir,
			// A small replication backlog (1 MB by default) keeps a
			// master's memory near a plain server's, for the tests that
			// set a maxmemory.
			"--repl-backlog-size", "64kb",
		}
		if opts.Persistent {
			args = append(args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			// A replica loads its sync from the socket, leaving no
			// dump.rdb for a restart to load.
			args = append(args, "--repl-diskless-load", "swapdb")
		}
		args = append(args, opts.Args...)
		s := &Server{tb: tb, bin: bin, port: port, cluster: filepath.Join(dir, "nodes.conf"), extra: args}
		tb.Cleanup(s.Stop)
		s.Start()
		c.nodes = append(c.nodes, s)
	}
	c.form()
	return c
}

// form joins the fresh nodes into one cluster: slots and config epochs on
// the masters, MEET, then REPLICATE on the replicas.
func (c *Cluster) form() {
	c.tb.Helper()
	per := 16384 / clusterMasters
	for i, m := range c.nodes[:clusterMasters] {
		lo, hi := i*per, (i+1)*per-1
		if i == clusterMasters-1 {
			hi = 16383
		}
		c.must(m, "CLUSTER", "ADDSLOTSRANGE", lo, hi)
		// Distinct config epochs from the start spare the cluster its
		// collision resolution (redis-cli --cluster create does the same).
		c.must(m, "CLUSTER", "SET-CONFIG-EPOCH", i+1)
	}
	for _, n := range c.nodes[1:] {
		c.must(c.nodes[0], "CLUSTER", "MEET", "127.0.0.1", n.port)
	}
	WaitFor(c.tb, "every node knows every other", func() error {
		for _, n := range c.nodes {
			v, err := n.Do("CLUSTER", "NODES")
			if err != nil {
				return err
			}
			lines := strings.Split(strings.TrimSpace(fmt.Sprint(v)), "\n")
			if len(lines) != len(c.nodes) || strings.Contains(fmt.Sprint(v), "handshake") {
				return fmt.Errorf("node %d sees %d nodes: %v", n.port, len(lines), v)
			}
		}
		return nil
	})
	for i, r := range c.nodes[clusterMasters:] {
		id, err := c.nodes[i].Do("CLUSTER", "MYID")
		if err != nil {
			c.tb.Fatalf("redistest: CLUSTER MYID: %v", err)
		}
		c.must(r, "CLUSTER", "REPLICATE", id)
	}
	c.WaitHealthy()
}

// must runs a setup command on n and fails the test if it fails.
func (c *Cluster) must(n *Server, args ...any) {
	c.tb.Helper()
	if _, err := n.Do(args...); err != nil {
		c.tb.Fatalf("redistest: %v on node %d: %v", args, n.port, err)
	}
}

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

// Nodes returns every node, masters first (as started: a failover makes a
// replica a master without reordering).
func (c *Cluster) Nodes() []*Server { return slices.Clone(c.nodes) }

// Running returns the nodes that are running.
func (c *Cluster) Running() []*Server {
	var out []*Server
	for _, n := range c.nodes {
		if n.running() {
			out = append(out, n)
		}
	}
	return out
}

// running reports whether the server's process is up.
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Addrs returns every node's host:port.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.Addr())
	}
	return out
}

// Client returns a cluster client of c, closed when the test ends. It
// knows every node, so it finds the cluster while any of them runs; as
// Server.Client, it fails fast while the nodes it needs are down.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	cc := NewClusterClient(c.Addrs()...)
	tb.Cleanup(func() { _ = cc.Close() })
	return cc
}

// NewClusterClient returns a cluster client of the nodes at addrs (one is
// enough), with the settings of Server.Client: context deadlines bound
// socket I/O, and few retries.
func NewClusterClient(addrs ...string) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 addrs,
		ContextTimeoutEnabled: true,
		MaxRetries:            1,
		DialTimeout:           time.Second,
		DialerRetries:         1,
		DialerRetryTimeout:    time.Millisecond,
	})
}

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

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, n := range c.nodes {
		n.Stop()
	}
}

// Start restarts every stopped node (with an empty data set unless the
// cluster is Persistent; each keeps its nodes.conf, so the cluster comes
// back with the same slots) and waits until the cluster is healthy.
func (c *Cluster) Start() {
	c.tb.Helper()
	for _, n := range c.nodes {
		if !n.running() {
			n.Start()
		}
	}
	c.WaitHealthy()
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

// Signal sends sig to every running node (SIGSTOP freezes the whole
// cluster, SIGCONT thaws it).
func (c *Cluster) Signal(sig os.Signal) {
	c.tb.Helper()
	for _, n := range c.Running() {
		n.Signal(sig)
	}
}

// freeClusterPort returns a free loopback port whose cluster bus port (the
// port + 10000, where the nodes talk to each other) is free too: a node
// whose bus port is taken exits at start.
func freeClusterPort() (int, error) {
	for range 100 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if port+10000 > 65535 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		if err != nil {
			continue
		}
		_ = l.Close()
		return port, nil
	}
	return 0, errors.New("100 free ports had their bus port (+10000) taken or out of range")
}
