package redistest

import (
	"net"
	"testing"
)

// TestLaunchLeavesATakenPort: the first port launch is given is taken (a
// listener of the test's, as another test process's node takes one
// freePort found free), so redis-server cannot bind it; launch starts the
// server on the next port instead of failing the test, and the server
// that answers there is its own.
func TestLaunchLeavesATakenPort(t *testing.T) {
	if ClusterMode() {
		t.Skip("it starts a plain server")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	first := taken.Addr().(*net.TCPAddr).Port
	picks := 0
	pick := func() (int, func(), error) {
		picks++
		if picks == 1 {
			return first, func() {}, nil
		}
		return freePort()
	}
	s := &Server{tb: t, bin: prepare(t)}
	t.Cleanup(s.Stop)
	s.launch(pick)
	if s.port == first || picks != 2 {
		t.Fatalf("the server is on port %d after %d picks; want the second pick's, not the taken %d", s.port, picks, first)
	}
	if pid := pidAt(s.Addr()); pid != s.cmd.Process.Pid {
		t.Fatalf("the server at %s is process %d, want launch's %d", s.Addr(), pid, s.cmd.Process.Pid)
	}
}

// TestStoppedServerKeepsItsPort: while a server is stopped, its port (and
// a cluster node's bus port) can be bound by nobody else (the bind a
// kernel's choice of a port for another process's server or connection
// would conflict with, since reserve makes the same bind), and Start
// starts it there again. Before, another test process's server could take
// the port meanwhile (CI at 59a5c37: "taken before redis-server bound
// it") and the restart failed the test.
func TestStoppedServerKeepsItsPort(t *testing.T) {
	if !reserves {
		t.Skip("ports are reserved on Linux only")
	}
	plain := &Server{tb: t, bin: prepare(t)}
	t.Cleanup(plain.Stop)
	plain.launch(freePort)
	node := StartCluster(t)
	for _, c := range []struct {
		name  string
		s     *Server
		ports []int
	}{
		{"plain", plain, []int{plain.port}},
		{"cluster node", node, []int{node.port, node.port + 10000}},
	} {
		c.s.Stop()
		for _, port := range c.ports {
			if _, release, err := reserve(port); err == nil {
				release()
				t.Fatalf("%s: port %d of the stopped server could be bound by another", c.name, port)
			}
		}
		c.s.Start()
		if pid := pidAt(c.s.Addr()); pid != c.s.cmd.Process.Pid {
			t.Fatalf("%s: the server at %s is process %d, want the restarted %d", c.name, c.s.Addr(), pid, c.s.cmd.Process.Pid)
		}
	}
}
