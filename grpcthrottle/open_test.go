package grpcthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// Issue 27, rule 1, over gRPC: callers give up on their RPCs in flight.
// A real grpc-go server on loopback counts arrivals in an exact sliding
// log; its handler takes 0-200 ms, every write of the client is delayed by
// up to 20 ms, and each caller's attempt has a timeout of 100 ms, tried
// again until it succeeds: eight callers, five calls each. The in-flight
// bound is a minute, so a token held for it would stall the run. Each
// given-up RPC is kept open and its token released when the server is done
// with it: its late answer, or the reset of its stream at the deadline the
// server was given. The server never refuses, keeps the window, and every
// RPC kept open ended before the bound (Stats).
func TestKeptOpenUntilServerDone(t *testing.T) {
	const n, w = 8, 400 * time.Millisecond
	ts := startServer(t, n, w, func(ctx context.Context, in string) (string, error) {
		d := rand.N(150 * time.Millisecond)
		if rand.IntN(2) == 0 {
			time.Sleep(d) // a handler that ignores its context
			return in, nil
		}
		select {
		case <-time.After(d):
			return in, nil
		case <-ctx.Done():
			return "", status.FromContextError(ctx.Err()).Err()
		}
	})
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(n, w))
	require.NoError(t, err)
	it, err := grpcthrottle.New(bucket, grpcthrottle.WithInFlightBound(time.Minute))
	require.NoError(t, err)
	cc := dial(t, ts.addr, append(it.DialOptions(), delayDialer(10*time.Millisecond))...)
	var wg sync.WaitGroup
	var mu sync.Mutex
	timeouts := 0
	for c := range 8 {
		wg.Go(func() {
			for k := range 2 {
				in := fmt.Sprint(c, "-", k)
				for {
					ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
					out, err := call(ctx, cc, in)
					cancel()
					if err == nil {
						assert.Equal(t, in, out)
						break
					}
					if !assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "err = %v", err) {
						return
					}
					if errors.Is(err, rxthrottle.ErrDeadline) {
						time.Sleep(10 * time.Millisecond) // refused before it went: no token
						continue
					}
					mu.Lock()
					timeouts++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	eventually(t, "the RPCs kept open to end", func() bool { return it.Stats().KeptOpen == 0 })
	accepted, _, refused := ts.stats()
	st := it.Stats()
	t.Logf("%d timeouts, %d accepted; %+v", timeouts, len(accepted), st)
	assert.Zero(t, refused, "the server refused RPCs")
	requireWindow(t, accepted, n, w)
	assert.Positive(t, timeouts)
	assert.Positive(t, st.LateAnswers)
	assert.Positive(t, st.KeptOpenTotal)
	assert.Equal(t, st.KeptOpenTotal, st.LateAnswers+st.PeerCloses, "an RPC kept open waited for the bound")
	// The others gave up before their headers went, and were cancelled: if
	// written meanwhile, they are held for the bound.
	assert.Equal(t, int64(st.HeldPastError-st.KeptOpenTotal), st.HoldingPastError)
	assert.Equal(t, int(st.HoldingPastError), bucket.Stats().Held)
}

// The reply of a unary RPC kept open is its own: a late answer writes
// nothing into the reply the caller gave, which the caller may use again
// at once. Every write of the client is 200 ms late, so the server's
// deadline (the caller's 100 ms, from the headers' late arrival) ends well
// after the caller's: the handler answers as soon as the caller gave up.
// And a call option that writes into the caller's memory at the RPC's end
// (grpc.Header) makes the RPC not kept open: it is cancelled at the
// caller's end, and its token held for the bound.
func TestKeptOpenOwnReply(t *testing.T) {
	gaveUp := make(chan struct{}, 1)
	var once sync.Once
	stop := func() { once.Do(func() { close(gaveUp) }) }
	defer stop() // no handler left waiting, whatever fails
	ts := startServer(t, 10, time.Second, nil)
	lateDial := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		return &lateConn{Conn: c}, err
	})
	for _, header := range []bool{false, true} {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket, grpcthrottle.WithInFlightBound(time.Minute))
		require.NoError(t, err)
		cc := dial(t, ts.addr, append(it.DialOptions(), lateDial)...)
		ts.handle = nil
		_, err = call(context.Background(), cc, "warm up")
		require.NoError(t, err)
		ts.handle = func(ctx context.Context, in string) (string, error) {
			if in == "b" {
				<-ctx.Done()
			}
			<-gaveUp
			return "late " + in, nil
		}
		reply := new(wrapperspb.StringValue)
		var opts []grpc.CallOption
		var md metadata.MD
		if header {
			opts = append(opts, grpc.Header(&md))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err = cc.Invoke(ctx, unaryMethod, wrapperspb.String(map[bool]string{false: "a", true: "b"}[header]), reply, opts...)
		cancel()
		require.Equal(t, codes.DeadlineExceeded, status.Code(err), "err = %v", err)
		if !header {
			require.Equal(t, uint64(1), it.Stats().KeptOpenTotal, "%+v", it.Stats())
			gaveUp <- struct{}{}
			eventually(t, "the late answer", func() bool { return it.Stats().LateAnswers == 1 })
			assert.Empty(t, reply.GetValue(), "the late answer went into the caller's reply")
			assert.Zero(t, bucket.Stats().Held)
			continue
		}
		st := it.Stats()
		assert.Zero(t, st.KeptOpenTotal)
		assert.Equal(t, uint64(1), st.HeldPastError)
		assert.Equal(t, int64(1), st.HoldingPastError, "held for the bound")
		stop()
	}
}

// lateConn delays every write by 200 ms.
type lateConn struct{ net.Conn }

func (c *lateConn) Write(b []byte) (int, error) {
	time.Sleep(200 * time.Millisecond)
	return c.Conn.Write(b)
}

// Issue 27, rule 2, over gRPC: the server counts an RPC and then closes
// its connection (a crash, a proxy's restart). On a direct connection
// nothing of the RPC can arrive after that, so its token is released at
// the close, not held for the bound (a minute); with
// WithStrictInFlightBound it is held.
func TestPeerCloseReleases(t *testing.T) {
	for _, strict := range []bool{false, true} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		cl := &closingListener{Listener: lis}
		ts := startServerOn(t, cl, 10, time.Second, func(ctx context.Context, in string) (string, error) {
			cl.closeAll() // after the server counted it
			<-ctx.Done()
			return in, nil
		})
		opts := []grpcthrottle.Option{grpcthrottle.WithInFlightBound(time.Minute)}
		if strict {
			opts = append(opts, grpcthrottle.WithStrictInFlightBound())
		}
		bucket, it, cc := newClient(t, ts.addr, 10, time.Second, opts...)
		_, err = call(context.Background(), cc, "x")
		require.Equal(t, codes.Unavailable, status.Code(err), "err = %v", err)
		accepted, _, _ := ts.stats()
		require.Len(t, accepted, 1, "the server counted it")
		st := it.Stats()
		if strict {
			assert.Zero(t, st.PeerCloses)
			assert.Equal(t, 1, bucket.Stats().Held, "strict: held for the bound")
			continue
		}
		assert.Equal(t, uint64(1), st.PeerCloses, "%+v", st)
		assert.Zero(t, bucket.Stats().Held, "released at the close")
	}
}

// closingListener keeps the connections it accepted, to close them all.
type closingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *closingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *closingListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
}
