package redistest

// One command on a fresh connection (Server.Do), and what Start checks
// the port with (ping), and the port it starts on (freePort).

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Do runs one command on a fresh client and returns its result; for test
// setup and inspection (SCRIPT FLUSH, PTTL, LRANGE).
func (s *Server) Do(args ...any) (any, error) {
	if s.c != nil {
		return s.c.Do(args...)
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Do(ctx, args...).Result()
}

// ping dials addr and checks that it answers PING with PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// pidAt returns the process_id the server at addr reports (INFO server),
// or 0 if it does not answer.
func pidAt(addr string) int {
	if ping(addr) != nil {
		return 0
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			pid, _ := strconv.Atoi(v)
			return pid
		}
	}
	return 0
}

// freePort asks the kernel for a free loopback port, reserved for the
// caller until it calls release (reserve).
func freePort() (port int, release func(), err error) {
	return reserve(0)
}
