package redistest

import (
	"errors"
	"fmt"
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
		bin := prepare(tb)
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
		s := &Server{tb: tb, bin: bin, cluster: filepath.Join(dir, "nodes.conf"), extra: args}
		tb.Cleanup(s.Stop)
		s.launch(freeClusterPort)
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
	return closedAtEnd(tb, NewClusterClient(c.Addrs()...))
}

// NewClusterClient returns a cluster client of the nodes at addrs (one is
// enough), with the settings of Server.Client: context deadlines bound
// socket I/O, and few retries. The caller closes it (CloseClient, for
// goleak, or Close).
func NewClusterClient(addrs ...string) *redis.ClusterClient {
	w := &dialWatch{}
	return watched(redis.NewClusterClient(fastFail(w, addrs...).Cluster()), w)
}

// NewFailoverClusterClient returns a cluster client for a test that kills
// a master: go-redis's defaults (with fewer than 2 retries, the
// MaxRetries of NewClusterClient, a cluster client never asks another
// node where a dead master's slots went), with context deadlines bounding
// socket I/O. The caller closes it, with CloseClient for goleak.
func NewFailoverClusterClient(addrs ...string) *redis.ClusterClient {
	w := &dialWatch{}
	return watched(redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 addrs,
		ContextTimeoutEnabled: true,
		DialTimeout:           defaultDialTimeout,
		Dialer:                w.dialer(defaultDialTimeout), // for CloseClient
	}), w)
}

// defaultDialTimeout is go-redis's default DialTimeout, which a Dialer of
// a dialWatch must be given.
const defaultDialTimeout = 5 * time.Second

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

// Signal sends sig to every running node (SIGSTOP freezes the whole
// cluster, SIGCONT thaws it).
func (c *Cluster) Signal(sig os.Signal) {
	c.tb.Helper()
	for _, n := range c.Running() {
		n.Signal(sig)
	}
}

// freeClusterPort returns a free loopback port whose cluster bus port (the
// port + 10000, where the nodes talk to each other) is free too, both
// reserved until release: a node whose bus port is taken exits at start.
func freeClusterPort() (port int, release func(), err error) {
	for range 100 {
		port, rel, err := freePort()
		if err != nil {
			return 0, nil, err
		}
		if port+10000 > 65535 {
			rel()
			continue
		}
		_, relBus, err := reserve(port + 10000)
		if err != nil {
			rel()
			continue
		}
		return port, func() { rel(); relBus() }, nil
	}
	return 0, nil, errors.New("100 free ports had their bus port (+10000) taken or out of range")
}
