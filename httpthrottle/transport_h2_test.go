package httpthrottle_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// HTTP/2 on loopback (SPEC.md, "Requests on the wire"): a stream the
// server refused unprocessed (REFUSED_STREAM, or above a GOAWAY's last
// stream) has its token released at once, with the strict bound too, and
// net/http sends it again with a token of its own; another reset of a
// stream is held as any error after writing, and the connection stays
// open for the other streams. The server is a few lines of HTTP/2 frames
// over h2c (net/http's client with Protocols set to unencrypted HTTP/2),
// since net/http's own server never refuses a stream on request.

// h2Action is what the raw server does with the i-th request stream.
type h2Action int

const (
	h2Answer    h2Action = iota // :status 200, end of stream
	h2Refuse                    // RST_STREAM REFUSED_STREAM
	h2Internal                  // RST_STREAM INTERNAL_ERROR
	h2GoAway                    // GOAWAY naming the stream before as the last, then close
	h2GoAwayOwn                 // GOAWAY naming this stream as the last, then close unanswered
)

// h2Server is a raw HTTP/2 server: it acknowledges settings and answers
// each request stream as script says.
type h2Server struct {
	ln     net.Listener
	script func(i int) h2Action
	scheme string
	reqs   atomic.Int32 // request streams seen
	conns  atomic.Int32 // connections accepted
	wg     sync.WaitGroup
}

func newH2Server(t *testing.T, script func(i int) h2Action) *h2Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return serveH2(t, ln, script, "http")
}

// newH2TLSServer is newH2Server over TLS, h2 by ALPN, with httptest's
// certificate; the returned base trusts it.
func newH2TLSServer(t *testing.T, script func(i int) h2Action) (*h2Server, *http.Transport) {
	t.Helper()
	cert := httptest.NewUnstartedServer(nil)
	cert.StartTLS()
	t.Cleanup(cert.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln = tls.NewListener(ln, &tls.Config{Certificates: cert.TLS.Certificates, NextProtos: []string{"h2"}})
	srv := serveH2(t, ln, script, "https")
	base := cert.Client().Transport.(*http.Transport).Clone()
	base.ForceAttemptHTTP2 = true
	t.Cleanup(base.CloseIdleConnections) // before the server's cleanup waits for its connections
	return srv, base
}

func serveH2(t *testing.T, ln net.Listener, script func(i int) h2Action, scheme string) *h2Server {
	s := &h2Server{ln: ln, script: script, scheme: scheme}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() { _ = ln.Close(); s.wg.Wait() })
	return s
}

func (s *h2Server) get(t *testing.T) *http.Request {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.scheme+"://"+s.ln.Addr().String()+"/", nil)
	require.NoError(t, err)
	return req
}

func h2Frame(typ, flags byte, stream uint32, payload []byte) []byte {
	f := make([]byte, 9, 9+len(payload))
	f[0], f[1], f[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	f[3], f[4] = typ, flags
	binary.BigEndian.PutUint32(f[5:], stream)
	return append(f, payload...)
}

func (s *h2Server) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := io.ReadFull(r, make([]byte, 24)); err != nil { // the client's preface
		return
	}
	if _, err := c.Write(h2Frame(0x4, 0, 0, nil)); err != nil { // SETTINGS
		return
	}
	hdr := make([]byte, 9)
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags, stream := hdr[3], hdr[4], binary.BigEndian.Uint32(hdr[5:])&0x7fffffff
		if _, err := io.ReadFull(r, make([]byte, n)); err != nil {
			return
		}
		var out []byte
		switch {
		case typ == 0x4 && flags&0x1 == 0: // SETTINGS: acknowledge
			out = h2Frame(0x4, 0x1, 0, nil)
		case typ == 0x1: // HEADERS: a request
			a := s.script(int(s.reqs.Add(1)) - 1)
			switch a {
			case h2Answer: // :status 200 (static table index 8), END_STREAM|END_HEADERS
				out = h2Frame(0x1, 0x5, stream, []byte{0x88})
			case h2Refuse:
				out = h2Frame(0x3, 0, stream, binary.BigEndian.AppendUint32(nil, 0x7))
			case h2Internal:
				out = h2Frame(0x3, 0, stream, binary.BigEndian.AppendUint32(nil, 0x2))
			case h2GoAway, h2GoAwayOwn:
				last := stream
				if a == h2GoAway {
					last = stream - 2
				}
				p := binary.BigEndian.AppendUint32(nil, last)
				_, _ = c.Write(h2Frame(0x7, 0, 0, binary.BigEndian.AppendUint32(p, 0)))
				time.Sleep(50 * time.Millisecond)
				return
			}
		}
		if out != nil {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// h2Base is net/http's Transport speaking HTTP/2 with prior knowledge.
func h2Base(t *testing.T) *http.Transport {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	base := &http.Transport{Protocols: p}
	t.Cleanup(base.CloseIdleConnections)
	return base
}

func TestTransportHTTP2Refusals(t *testing.T) {
	steps := []struct {
		name   string
		script func(i int) h2Action
		opts   []httpthrottle.TransportOption
		want   httpthrottle.TransportStats // the counters compared
	}{
		{"REFUSED_STREAM", func(i int) h2Action { return [...]h2Action{h2Refuse, h2Answer}[min(i, 1)] }, nil,
			httpthrottle.TransportStats{Sent: 1, Resends: 1, Attempts: 2, RefusedStreams: 1}},
		{"REFUSED_STREAM, strict bound", func(i int) h2Action { return [...]h2Action{h2Refuse, h2Answer}[min(i, 1)] },
			[]httpthrottle.TransportOption{httpthrottle.WithStrictInFlightBound()},
			httpthrottle.TransportStats{Sent: 1, Resends: 1, Attempts: 2, RefusedStreams: 1}},
		{"GOAWAY below the stream, strict bound",
			func(i int) h2Action { return [...]h2Action{h2Answer, h2GoAway, h2Answer}[min(i, 2)] },
			[]httpthrottle.TransportOption{httpthrottle.WithStrictInFlightBound()},
			httpthrottle.TransportStats{Sent: 2, Resends: 1, Attempts: 3, RefusedStreams: 1}},
	}
	for _, s := range steps {
		for _, overTLS := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, TLS %v", s.name, overTLS), func(t *testing.T) {
				srv, base := newH2Server(t, s.script), h2Base(t)
				if overTLS {
					srv, base = newH2TLSServer(t, s.script)
				}
				testH2Refusal(t, srv, base, s.opts, s.want)
			})
		}
	}
}

// testH2Refusal sends want.Sent requests through a Transport over base to
// srv and compares the counters of want.
func testH2Refusal(t *testing.T, srv *h2Server, base http.RoundTripper, opts []httpthrottle.TransportOption, want httpthrottle.TransportStats) {
	tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Minute, nil),
		append([]httpthrottle.TransportOption{httpthrottle.WithBase(base)}, opts...)...)
	require.NoError(t, err)
	for range want.Sent {
		resp, err := tr.RoundTrip(srv.get(t))
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, 2, resp.ProtoMajor)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	st := tr.Stats()
	got := httpthrottle.TransportStats{Sent: st.Sent, Resends: st.Resends, Attempts: st.Attempts,
		RefusedStreams: st.RefusedStreams, HoldingPastError: st.HoldingPastError, PeerCloses: st.PeerCloses}
	assert.Equal(t, want, got, "the refused stream's token is released at once, not held for the bound")
	assert.Equal(t, int32(want.Attempts), srv.reqs.Load())
}

// Another reset of a stream is not the connection's close: the token is
// held past the error (on a direct connection too), and the connection
// stays open for the next request.
func TestTransportHTTP2StreamResetIsHeld(t *testing.T) {
	srv := newH2Server(t, func(i int) h2Action { return [...]h2Action{h2Internal, h2Answer}[min(i, 1)] })
	tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Minute, nil), httpthrottle.WithBase(h2Base(t)))
	require.NoError(t, err)
	_, err = tr.RoundTrip(srv.get(t))
	require.Error(t, err)
	resp, err := tr.RoundTrip(srv.get(t))
	require.NoError(t, err)
	resp.Body.Close()
	st := tr.Stats()
	assert.Equal(t, uint64(1), st.ErrorsAfterWrite)
	assert.Equal(t, int64(1), st.HoldingPastError, "held for the bound")
	assert.Zero(t, st.PeerCloses)
	assert.Zero(t, st.RefusedStreams)
	assert.Zero(t, st.Resets)
	assert.Equal(t, int32(1), srv.conns.Load(), "one connection for both: the reset stream did not close it")
}

// A GOAWAY that names the stream as received, then the connection's close
// without its answer: the server may have processed it, so it is a peer's
// close as on HTTP/1 (released on a direct connection, held with the
// strict bound).
func TestTransportHTTP2GoAwayThenClose(t *testing.T) {
	for _, strict := range []bool{false, true} {
		srv := newH2Server(t, func(i int) h2Action { return [...]h2Action{h2GoAwayOwn, h2Answer}[min(i, 1)] })
		opts := []httpthrottle.TransportOption{httpthrottle.WithBase(h2Base(t))}
		if strict {
			opts = append(opts, httpthrottle.WithStrictInFlightBound())
		}
		tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Minute, nil), opts...)
		require.NoError(t, err)
		_, err = tr.RoundTrip(srv.get(t))
		require.ErrorContains(t, err, "GOAWAY")
		st := tr.Stats()
		assert.Equal(t, uint64(1), st.ErrorsAfterWrite)
		assert.Zero(t, st.RefusedStreams, "strict %v", strict)
		if strict {
			assert.Equal(t, int64(1), st.HoldingPastError, "held for the bound behind a proxy")
		} else {
			assert.Equal(t, uint64(1), st.PeerCloses, "released at the close of a direct connection")
			assert.Zero(t, st.HoldingPastError)
		}
	}
}
