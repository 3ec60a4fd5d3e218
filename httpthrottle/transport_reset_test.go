package httpthrottle_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// resetTrial: a client on loopback writes size bytes and closes 50 ms
// later, as a reset (SO_LINGER 0, what the Transport does when it gives up
// on a connection) or not; the server, with a 64 KiB receive buffer,
// starts reading 200 ms after it accepted. It returns what the server read
// and how its read ended.
func resetTrial(t *testing.T, size int, reset bool) (int64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	type result struct {
		n   int64
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{0, err}
			return
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(64 << 10)
		time.Sleep(200 * time.Millisecond)
		n, err := io.Copy(io.Discard, c)
		got <- result{n, err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	tc := c.(*net.TCPConn)
	_ = tc.SetWriteBuffer(64 << 10)
	go func() { _, _ = tc.Write(make([]byte, size)) }()
	time.Sleep(50 * time.Millisecond)
	if reset {
		var c net.Conn = tc
		if size%2 == 1 { // through a TLS client, as an https connection is
			c = tls.Client(tc, &tls.Config{InsecureSkipVerify: true})
		}
		require.True(t, httpthrottle.ResetConn(c), "resetConn reached the TCP connection")
	}
	require.NoError(t, tc.Close())
	r := <-got
	return r.n, r.err
}

// TestResetCloseDropsTheQueue: resetConn reaches the TCP connection (also
// under a *tls.Conn), and the server of a connection so closed reads
// ECONNRESET: what was still queued in the client's kernel never reaches
// it. (What it had already received, it still reads.)
func TestResetCloseDropsTheQueue(t *testing.T) {
	for _, size := range []int{1 << 20, 1<<20 + 1} {
		_, err := resetTrial(t, size, true)
		require.True(t, errors.Is(err, syscall.ECONNRESET), "err = %v", err)
	}
	_, err := resetTrial(t, 1<<20, false)
	require.NoError(t, err, "a normal close ends with EOF")
}

// TestResetCloseReport (RXTHROTTLE_RESET_REPORT=1) prints what the server
// read after the close, with and without the reset (BENCHMARKS.md).
func TestResetCloseReport(t *testing.T) {
	if os.Getenv("RXTHROTTLE_RESET_REPORT") == "" {
		t.Skip("set RXTHROTTLE_RESET_REPORT=1 to run this report")
	}
	for _, size := range []int{100, 1 << 20} {
		for _, reset := range []bool{false, true} {
			n, err := resetTrial(t, size, reset)
			t.Logf("request %8d B, reset %-5v: the server read %8d B after the close (%v)", size, reset, n, err)
		}
	}
}
