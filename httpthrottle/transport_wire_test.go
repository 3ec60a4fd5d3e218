package httpthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// Issue 18 on virtual time: what the Transport does with each attempt as
// the wire reports it through net/http/httptrace. wireBase plays net/http's
// Transport: each call runs a script of trace events, and the instants at
// which it "writes" a request (WroteHeaders) are its arrivals.

type wireBase struct {
	script func(i int, w *wireCalls) (*http.Response, error)
	calls  atomic.Int32
	rec    recorder
}

// wireCalls is one call's view of the hooks and of its request.
type wireCalls struct {
	req   *http.Request
	trace *httptrace.ClientTrace
	rec   *recorder
}

func (b *wireBase) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(b.calls.Add(1)) - 1
	readBody(r)
	trace := httptrace.ContextClientTrace(r.Context())
	if trace == nil {
		trace = &httptrace.ClientTrace{}
	}
	return b.script(i, &wireCalls{req: r, trace: trace, rec: &b.rec})
}

// conn gets a connection: GetConn, then GotConn with c.
func (w *wireCalls) conn(c net.Conn) {
	if w.trace.GetConn != nil {
		w.trace.GetConn("api.test:80")
	}
	if w.trace.GotConn != nil {
		w.trace.GotConn(httptrace.GotConnInfo{Conn: c, Reused: true})
	}
}

// write writes the request on c: its headers go unless c was closed.
func (w *wireCalls) write(c *fakeConn) error {
	if c != nil && c.closed.Load() {
		return errors.New("write: use of closed network connection")
	}
	w.rec.add("arrivals", time.Now())
	if w.trace.WroteHeaders != nil {
		w.trace.WroteHeaders()
	}
	return nil
}

// wait sleeps d or until the request's context ends.
func (w *wireCalls) wait(d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-w.req.Context().Done():
		return context.Cause(w.req.Context())
	}
}

func (w *wireCalls) ok() (*http.Response, error) { return respond(w.req, http.StatusOK, nil), nil }

// fakeConn is a connection the hooks may close.
type fakeConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *fakeConn) Close() error { c.closed.Store(true); return nil }

var errReset = errors.New("read: connection reset by peer")

func TestTransportWireErrors(t *testing.T) {
	// One token of Per(1, 1s); the first call fails after 200 ms at the
	// stage given, the second goes when the first's token allows.
	steps := []struct {
		name   string
		fail   func(w *wireCalls) (*http.Response, error)
		second time.Duration // the second request's arrival
		stats  httpthrottle.TransportStats
	}{
		{"no connection: given back", func(w *wireCalls) (*http.Response, error) {
			w.trace.GetConn("api.test:80")
			time.Sleep(200 * time.Millisecond)
			return nil, errors.New("dial tcp: connection refused")
		}, 200 * time.Millisecond, httpthrottle.TransportStats{Sent: 2, Attempts: 2, ErrorsUnwritten: 1}},
		{"connection, headers never written: given back", func(w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			time.Sleep(200 * time.Millisecond)
			return nil, errors.New("write: broken pipe")
		}, 200 * time.Millisecond, httpthrottle.TransportStats{Sent: 2, Attempts: 2, ErrorsUnwritten: 1}},
		{"written, then an unknown error: held for the bound", func(w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			time.Sleep(200 * time.Millisecond)
			return nil, errReset
		}, 3200 * time.Millisecond, httpthrottle.TransportStats{Sent: 2, Attempts: 2, ErrorsAfterWrite: 1, HeldPastError: 1}},
		{"written, then reset by the peer: released", func(w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			time.Sleep(200 * time.Millisecond)
			return nil, errPeerReset
		}, 1200 * time.Millisecond, httpthrottle.TransportStats{Sent: 2, Attempts: 2, ErrorsAfterWrite: 1, PeerCloses: 1}},
		{"written, then the peer's end of stream: released", func(w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			time.Sleep(200 * time.Millisecond)
			return nil, fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", io.ErrUnexpectedEOF)
		}, 1200 * time.Millisecond, httpthrottle.TransportStats{Sent: 2, Attempts: 2, ErrorsAfterWrite: 1, PeerCloses: 1}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &wireBase{script: func(i int, w *wireCalls) (*http.Response, error) {
					if i == 0 {
						return s.fail(w)
					}
					w.conn(&fakeConn{})
					require.NoError(t, w.write(nil))
					return w.ok()
				}}
				tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
					httpthrottle.WithInFlightBound(2*time.Second))
				require.NoError(t, err)
				start := time.Now()
				_, err = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.Error(t, err)
				resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.NoError(t, err)
				resp.Body.Close()
				at := base.rec.offsets("arrivals", start)
				assert.Equal(t, s.second, at[len(at)-1])
				synctest.Wait()
				assert.Equal(t, s.stats, tr.Stats())
			})
		})
	}
}

// dropThenAnswer is a base call that writes, loses its connection 100 ms
// later (the server counted it) and sends the request again on a new
// connection, the way net/http's Transport does; h2 skips GetConn before
// the second connection, as HTTP/2's own retries do.
func dropThenAnswer(t *testing.T, h2 bool) func(i int, w *wireCalls) (*http.Response, error) {
	return func(i int, w *wireCalls) (*http.Response, error) {
		w.conn(&fakeConn{})
		require.NoError(t, w.write(nil))
		if i > 0 {
			return w.ok()
		}
		time.Sleep(100 * time.Millisecond) // the server counts it and drops the connection
		if h2 {
			w.trace.GotConn(httptrace.GotConnInfo{Conn: &fakeConn{}})
		} else {
			w.conn(&fakeConn{})
		}
		require.NoError(t, w.write(nil))
		return w.ok()
	}
}

func TestTransportResendTakesAToken(t *testing.T) {
	for _, strict := range []bool{false, true} {
		for _, h2 := range []bool{false, true} {
			name := "HTTP/1: GetConn"
			if h2 {
				name = "HTTP/2: GotConn only"
			}
			if strict {
				name += ", strict bound"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					base := &wireBase{script: dropThenAnswer(t, h2)}
					opts := []httpthrottle.TransportOption{httpthrottle.WithBase(base), httpthrottle.WithInFlightBound(2 * time.Second)}
					if strict {
						opts = append(opts, httpthrottle.WithStrictInFlightBound())
					}
					tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), opts...)
					require.NoError(t, err)
					start := time.Now()
					resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
					require.NoError(t, err)
					resp.Body.Close()
					resp, err = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
					require.NoError(t, err)
					resp.Body.Close()
					// The first attempt's connection dropped at 100 ms: on a
					// direct connection its token is released then and
					// renews 1 s later; with the strict bound it is held
					// until 100 ms + 2 s. The re-send waits for it; its own
					// token is released at its answer and renews 1 s later.
					want := []time.Duration{0, 1100 * time.Millisecond, 2100 * time.Millisecond}
					stats := httpthrottle.TransportStats{Sent: 2, Attempts: 3, Resends: 1, ErrorsAfterWrite: 1, PeerCloses: 1}
					if strict {
						want = []time.Duration{0, 3100 * time.Millisecond, 4100 * time.Millisecond}
						stats.PeerCloses, stats.HeldPastError = 0, 1
					}
					assert.Equal(t, want, base.rec.offsets("arrivals", start))
					synctest.Wait()
					assert.Equal(t, stats, tr.Stats())
				})
			})
		}
	}
}

func TestTransportResendDepartureRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &wireBase{script: dropThenAnswer(t, false)}
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
			httpthrottle.WithDepartureRenewal())
		require.NoError(t, err)
		start := time.Now()
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, []time.Duration{0, time.Second}, base.rec.offsets("arrivals", start),
			"the re-send waits for a token of its own (Wait: one window after the first departure)")
		assert.Equal(t, httpthrottle.TransportStats{Sent: 1, Attempts: 2, Resends: 1, ErrorsAfterWrite: 1}, tr.Stats())
	})
}

func TestTransportResendWithoutTokenIsNotWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The re-send waits for a token that comes at 1.1 s (the first
		// attempt's, released at the drop); the request's context is
		// cancelled at 1 s. The hook cannot stop net/http from writing,
		// so it closes the connection it was given: the write fails and
		// nothing reaches the server.
		second := &fakeConn{}
		base := &wireBase{script: func(_ int, w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			time.Sleep(100 * time.Millisecond)
			w.conn(second)
			if err := w.write(second); err != nil {
				return nil, err
			}
			return w.ok()
		}}
		b := newBucket(t, 1, time.Second, nil)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(base), httpthrottle.WithInFlightBound(2*time.Second))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err = tr.RoundTrip(mustRequest(t, ctx, "GET", nil))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, time.Second, time.Since(start), "the context bounds the re-send's wait")
		synctest.Wait() // the caller has its error; the call ends behind it
		assert.True(t, second.closed.Load(), "the re-send's connection is closed before it writes")
		assert.Equal(t, []time.Duration{0}, base.rec.offsets("arrivals", start), "one arrival")
		st := tr.Stats()
		assert.Equal(t, httpthrottle.TransportStats{Sent: 1, Cancelled: 1, Attempts: 1, ErrorsAfterWrite: 1, PeerCloses: 1}, st)
		time.Sleep(3 * time.Second)
		assert.Zero(t, tr.Stats().HoldingPastError)
	})
}

func TestTransportWireKnownBaseNoConnection(t *testing.T) {
	// net/http's Transport on loopback, to a port nobody listens on: the
	// dial fails, no connection, nothing written; the token goes back.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	netBase := &http.Transport{}
	defer netBase.CloseIdleConnections()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Hour))
	require.NoError(t, err)
	tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(netBase))
	require.NoError(t, err)
	req, err := http.NewRequest("GET", "http://"+addr+"/", nil)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req)
	require.Error(t, err)
	assert.Equal(t, 1, b.Stats().Free, "the token went back unused")
	assert.Equal(t, uint64(1), tr.Stats().ErrorsUnwritten)
	assert.Zero(t, tr.Stats().ErrorsAfterWrite)
}
