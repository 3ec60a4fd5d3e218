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
	pick := func() (int, error) {
		picks++
		if picks == 1 {
			return first, nil
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
