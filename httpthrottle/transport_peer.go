package httpthrottle

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// peerGone reports whether err, the error of an attempt on req, says that
// the peer closed or reset the connection (and not that the attempt's own
// context ended): then nothing more of the request can reach the server
// on a direct connection.
func (t *Transport) peerGone(req *http.Request, err error) bool {
	return req.Context().Err() == nil && closedByPeer(err)
}

// closedByPeer reports whether err is a connection the other end closed
// or reset: a reset, a broken pipe, an end of stream before the answer,
// net/http's "server closed idle connection", or HTTP/2's GOAWAY followed
// by the connection's close (a stream at or below the GOAWAY's last one,
// which the server may have processed). A reset of one HTTP/2 stream is
// not one: the connection is still open.
func closedByPeer(err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		err.Error() == "http: server closed idle connection" ||
		strings.Contains(err.Error(), "http2: server sent GOAWAY and closed the connection")
}

// strictFor reports whether a peer's close of req's connection says
// nothing of whether req can still arrive: with WithStrictInFlightBound, or
// when the base is net/http's Transport and its Proxy sends req through a
// proxy (or cannot say), which may still forward it.
func (t *Transport) strictFor(req *http.Request) bool {
	if t.cfg.policy.StrictInFlightBound {
		return true
	}
	base, ok := t.cfg.base.(*http.Transport)
	if !ok || base.Proxy == nil {
		return false
	}
	u, err := base.Proxy(req)
	return err != nil || u != nil
}

// http2 reports whether an attempt of req on c is a stream of an HTTP/2
// connection: TLS that negotiated h2, or, for an http URL, net/http's
// Transport speaking HTTP/2 with prior knowledge (Protocols with
// UnencryptedHTTP2 and not HTTP1).
func (t *Transport) http2(req *http.Request, c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.ConnectionState().NegotiatedProtocol == "h2"
	}
	base, ok := t.cfg.base.(*http.Transport)
	if !ok || base.Protocols == nil || req.URL == nil || req.URL.Scheme != "http" {
		return false
	}
	return base.Protocols.UnencryptedHTTP2() && !base.Protocols.HTTP1()
}

// resetConn makes the next close of c a reset (SO_LINGER 0): whatever is
// still queued in the kernel for the peer is dropped instead of sent. It
// reaches the TCP connection under a *tls.Conn or any wrapper with a
// NetConn method, and leaves an HTTP/2 connection alone (other requests
// share it). It reports whether it could.
func resetConn(c net.Conn) bool {
	for c != nil {
		if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
			return false
		}
		if l, ok := c.(interface{ SetLinger(int) error }); ok {
			return l.SetLinger(0) == nil
		}
		inner, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return false
		}
		c = inner.NetConn()
	}
	return false
}
