// Package redistest starts throwaway redis-servers for tests of code that
// uses redisstore: on a free loopback port, without persistence, stopped
// when the test ends (and killed with the test process on Linux). Start
// gives one server; StartReplica, StartReplicatedCluster and StartSentinel
// give a replica, a Redis Cluster of masters with replicas, and a Sentinel.
// It is part of the redisstore module, so it needs nothing redisstore does
// not (go-redis); redisstore's, rxprom's and the benchmarks' tests use it.
// Import it only from _test.go files.
//
// When redis-server is not on PATH the tests that need it skip with a message
// saying how to install it, unless the environment sets
// RXTHROTTLE_REQUIRE_REDIS=1 (as CI does), which makes a missing server a
// failure rather than a silent skip. With RXTHROTTLE_REDIS_CLUSTER=1
// (ClusterEnv), every server Start gives is a whole Cluster.
package redistest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv is the environment variable that turns a missing redis-server
// into a test failure.
const RequireEnv = "RXTHROTTLE_REQUIRE_REDIS"

// SkipMessage is what a test says when it skips for want of a server.
const SkipMessage = "install redis-server (apt-get install -y redis-server) to run the Redis tests"

// Server is one redis-server process that the test owns. Stop and Start
// restart it on the same port, with an empty data set, to simulate an outage.
type Server struct {
	tb      testing.TB
	bin     string
	port    int
	cluster string   // nodes.conf path of a cluster-mode server; "" otherwise
	extra   []string // more redis-server arguments (StartWith)
	c       *Cluster // in cluster mode (ClusterEnv), the cluster this stands for
	watch   string   // the configuration file of a Sentinel (sentinel.go); "" otherwise

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	logs bytes.Buffer
}

// Start starts a redis-server for tb, or skips tb (fails it, with
// RXTHROTTLE_REQUIRE_REDIS=1) when the binary is not on PATH. The server is
// stopped when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartWith(tb)
}

// StartWith is Start with more redis-server arguments, given again at each
// restart: "--maxmemory", "1mb", or "--rename-command", "CONFIG", "".
func StartWith(tb testing.TB, args ...string) *Server {
	tb.Helper()
	if ClusterMode() {
		return startAsCluster(tb, ClusterOptions{Args: args})
	}
	s := &Server{tb: tb, bin: prepare(tb), extra: args}
	tb.Cleanup(s.Stop)
	s.launch(freePort)
	return s
}

// StartPersistent is Start for a server that keeps its data across Stop
// and Start: an append-only file in a directory of the test's, written and
// fsynced before each reply (appendfsync always), so a SIGKILL loses no
// write a client saw acknowledged.
func StartPersistent(tb testing.TB) *Server {
	tb.Helper()
	if ClusterMode() {
		return startAsCluster(tb, ClusterOptions{Persistent: true})
	}
	return StartWith(tb, "--dir", tb.TempDir(), "--appendonly", "yes", "--appendfsync", "always")
}

// StartCluster is Start for a one-node Redis Cluster that owns all 16384
// slots. Multi-key commands and scripts whose keys hash to different slots
// fail there with CROSSSLOT, as on a real cluster, so it checks hash tags
// for real.
func StartCluster(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{tb: tb, bin: prepare(tb), cluster: filepath.Join(tb.TempDir(), "nodes.conf")}
	tb.Cleanup(s.Stop)
	// A cluster node's bus port (+10000) must be free too.
	s.launch(freeClusterPort)
	if _, err := s.Do("CLUSTER", "ADDSLOTSRANGE", 0, 16383); err != nil {
		tb.Fatalf("redistest: CLUSTER ADDSLOTSRANGE: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := s.Do("CLUSTER", "INFO")
		if err == nil && strings.Contains(fmt.Sprint(info), "cluster_state:ok") {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: cluster not ok within 10s: %v %v", info, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ClusterClient returns a cluster client of a StartCluster server, closed
// when the test ends.
func (s *Server) ClusterClient(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr()}, ContextTimeoutEnabled: true})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// prepare finds redis-server, or skips or fails tb.
func prepare(tb testing.TB) (bin string) {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("redis-server not found on PATH and %s=1: %s", RequireEnv, SkipMessage)
		}
		tb.Skip(SkipMessage)
	}
	return bin
}

// Addr is the server's host:port.
func (s *Server) Addr() string {
	if s.c != nil {
		return s.c.nodes[0].Addr()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// Client returns a new client of the server, closed when the test ends. Its
// context deadlines bound socket I/O (ContextTimeoutEnabled), so a
// redisstore WithTimeout holds even against a stalled server.
//
// In cluster mode (ClusterEnv) it is a cluster client of the cluster.
// CloseClient closes it before the test ends, for goleak.
func (s *Server) Client(tb testing.TB) redis.UniversalClient {
	tb.Helper()
	if s.c != nil {
		return s.c.Client(tb)
	}
	w := &dialWatch{}
	return closedAtEnd(tb, watched(redis.NewClient(fastFail(w, s.Addr()).Simple()), w))
}

// fastFail returns the settings of Server.Client and NewClusterClient,
// the one or the other's by Simple or Cluster, for the servers at addrs:
// context deadlines bound socket I/O, and the client fails fast while a
// server is down (a test of an outage should not spend its time in the
// client's retry back-off). Its Dialer records the pools' goroutines in
// w, for CloseClient.
func fastFail(w *dialWatch, addrs ...string) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:                 addrs,
		ContextTimeoutEnabled: true,
		MaxRetries:            1,
		DialTimeout:           time.Second,
		Dialer:                w.dialer(time.Second),
		DialerRetries:         1,
		DialerRetryTimeout:    time.Millisecond,
	}
}

// closedAtEnd closes c, a client redistest watches, when tb ends (unless
// CloseClient has closed it first), and returns it.
func closedAtEnd[C redis.UniversalClient](tb testing.TB, c C) C {
	tb.Cleanup(func() {
		watches.Delete(redis.UniversalClient(c))
		_ = c.Close()
	})
	return c
}

// Stop kills the server and waits for it to exit. Stopping a stopped server
// does nothing.
func (s *Server) Stop() {
	if s.c != nil {
		s.c.Stop()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd, s.done = nil, nil
}

// Signal sends sig to the running server: SIGSTOP freezes it (it accepts
// connections but answers nothing), SIGCONT thaws it.
func (s *Server) Signal(sig os.Signal) {
	s.tb.Helper()
	if s.c != nil {
		s.c.Signal(sig)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.tb.Fatalf("redistest: Signal(%v): the server is not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("redistest: Signal(%v): %v", sig, err)
	}
}
