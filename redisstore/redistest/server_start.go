package redistest

// Starting a server's process: on a new port (launch), which it leaves
// for another when someone else took it first, or again on its own
// (Start, after Stop).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// portTries is how many ports launch tries before it fails the test. A
// port freePort reserved is given by the kernel to nobody else (reserve),
// but a process that binds a port by its number, not the kernel's choice,
// may still have it (and outside Linux, where nothing is reserved, any
// process): in CI three test processes start cluster nodes at once (each
// takes six ports and their bus ports), and five taken in a row are not
// seen.
const portTries = 5

// errPortTaken is start's error when redis-server could not bind its port
// (or its cluster bus port): another process has it.
var errPortTaken = errors.New("taken before redis-server bound it (another process's)")

// launch starts the new server s on a port pick chooses and reserves, and
// on another port pick chooses if another process took that one before
// redis-server bound it, up to portTries ports; it fails the test if none
// works. Only a new server may move: a restarted one keeps the port its
// clients (and a cluster's other nodes) know, which its reservation keeps
// from other processes' servers meanwhile.
func (s *Server) launch(pick func() (port int, release func(), err error)) {
	s.tb.Helper()
	for try := 1; ; try++ {
		port, release, err := pick()
		if err != nil {
			s.tb.Fatalf("redistest: no free port: %v", err)
		}
		s.port = port
		err = s.start()
		if err == nil {
			// The port stays reserved until the test ends, so that
			// nobody takes it while the server is stopped: Start
			// finds it free.
			s.tb.Cleanup(release)
			return
		}
		release()
		if !errors.Is(err, errPortTaken) || try == portTries {
			s.tb.Fatalf("redistest: %v", err)
		}
		s.tb.Logf("redistest: %v; trying another port", err)
		if s.cluster != "" {
			// A new node's nodes.conf names nothing but itself, on the
			// port it leaves: it starts afresh on the next.
			_ = os.Remove(s.cluster)
		}
	}
}

// Start (re)starts the server on its port and waits until it answers PING.
// It fails the test if the server does not come up within 10 seconds.
func (s *Server) Start() {
	s.tb.Helper()
	if s.c != nil {
		s.c.Start()
		return
	}
	if err := s.start(); err != nil {
		s.tb.Fatalf("redistest: %v", err)
	}
}

// start starts redis-server on s.port and waits until it answers PING:
// it returns an error wrapping errPortTaken if the port was taken, and
// another if the server exited or did not answer within 10 seconds.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("server on port %d already running", s.port)
	}
	cmd := exec.Command(s.bin, s.args()...)
	dieWithParent(cmd)
	s.logs.Reset()
	cmd.Stdout = &s.logs
	cmd.Stderr = &s.logs
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %v", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The server on the port must be this process: a port freePort
		// found free can be taken by another test process's server
		// before this one binds it, and that one answers PING too.
		if pidAt(s.Addr()) == cmd.Process.Pid {
			return nil
		}
		select {
		case <-done:
			s.cmd = nil
			if strings.Contains(s.logs.String(), "Address already in use") {
				return fmt.Errorf("port %d was free when chosen and %w: %s", s.port, errPortTaken, s.logs.String())
			}
			return fmt.Errorf("redis-server exited at start: %s", s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			s.cmd = nil
			return fmt.Errorf("redis-server on port %d did not answer PING within 10s: %s", s.port, s.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// args are redis-server's arguments for s.
func (s *Server) args() []string {
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "yes",
		"--daemonize", "no",
		"--loglevel", "warning",
	}
	if s.cluster != "" {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", s.cluster)
	}
	if s.watch != "" {
		args = append([]string{s.watch, "--sentinel"}, args...)
	}
	return append(args, s.extra...)
}
