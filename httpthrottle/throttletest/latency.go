package throttletest

import (
	"context"
	"net"
	"time"

	"github.com/benbjohnson/clock"
)

// delayDialer dials TCP connections whose writes are delayed: the
// Server's Client uses it to put latency on the way in.
type delayDialer struct {
	net.Dialer
	clock clock.Clock
	delay func() time.Duration
}

func (d *delayDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil || d.delay == nil {
		return c, err
	}
	return &delayConn{Conn: c, clock: d.clock, delay: d.delay}, nil
}

// delayConn holds every write back for a delay before it goes: the bytes
// of a request reach the server that much later than the client sent them.
// Writes stay in order (net/http writes a connection from one goroutine).
type delayConn struct {
	net.Conn
	clock clock.Clock
	delay func() time.Duration
}

func (c *delayConn) Write(b []byte) (int, error) {
	if d := c.delay(); d > 0 {
		c.clock.Sleep(d)
	}
	return c.Conn.Write(b)
}
