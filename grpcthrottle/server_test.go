package grpcthrottle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// Issue 22: strict where it counts, over gRPC. A real grpc-go server on
// loopback counts arrivals in an exact sliding log; clients on four
// connections share one Interceptor over a bucket with exactly the
// server's quota; every write on the wire is delayed at random, and the
// handler takes a random time. The server never refuses an RPC, and what it
// accepted keeps the window.

const (
	wireN     = 8
	wireW     = 400 * time.Millisecond
	wireTotal = 32 // four windows' worth
)

// delayDialer dials loopback and delays every write by up to max, so that
// RPCs that left a window apart can reach the server bunched.
func delayDialer(max time.Duration) grpc.DialOption {
	return grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return &delayConn{Conn: c, max: max}, nil
	})
}

type delayConn struct {
	net.Conn
	max time.Duration
}

func (c *delayConn) Write(b []byte) (int, error) {
	time.Sleep(rand.N(c.max))
	return c.Conn.Write(b)
}

// wireRun sends wireTotal calls at once, call i on connection i%4 of four
// to ts, each with a random delay on every write, through one Interceptor
// over a bucket with the server's quota; it fails the test on any call's
// error and returns the bucket and the Interceptor.
func wireRun(t *testing.T, ts *testServer, do func(cc *grpc.ClientConn, i int) error) (*rxthrottle.Bucket, *grpcthrottle.Interceptor) {
	t.Helper()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(wireN, wireW))
	require.NoError(t, err)
	it, err := grpcthrottle.New(bucket)
	require.NoError(t, err)
	var conns []*grpc.ClientConn
	for range 4 {
		conns = append(conns, dial(t, ts.addr, append(it.DialOptions(), delayDialer(15*time.Millisecond))...))
	}
	var wg sync.WaitGroup
	errs := make(chan error, wireTotal)
	for i := range wireTotal {
		wg.Go(func() { errs <- do(conns[i%len(conns)], i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return bucket, it
}

func TestServerNeverRefusesUnary(t *testing.T) {
	ts := startServer(t, wireN, wireW, func(ctx context.Context, in string) (string, error) {
		time.Sleep(rand.N(20 * time.Millisecond)) // a handler of varying speed
		return in, nil
	})
	bucket, it := wireRun(t, ts, func(cc *grpc.ClientConn, i int) error {
		out, err := call(context.Background(), cc, fmt.Sprint(i))
		if err == nil && out != fmt.Sprint(i) {
			err = fmt.Errorf("RPC %d answered %q", i, out)
		}
		return err
	})
	accepted, _, refused := ts.stats()
	assert.Zero(t, refused, "the server refused RPCs")
	assert.Len(t, accepted, wireTotal)
	requireWindow(t, accepted, wireN, wireW)
	assert.Equal(t, grpcthrottle.Stats{Sent: wireTotal}, it.Stats())
	assert.Zero(t, bucket.Stats().Held, "tokens still held after every RPC answered")
}

func TestServerNeverRefusesStreams(t *testing.T) {
	ts := startServer(t, wireN, wireW, nil)
	bucket, it := wireRun(t, ts, func(cc *grpc.ClientConn, _ int) error { return echoStream(context.Background(), cc, 3) })
	accepted, messages, refused := ts.stats()
	assert.Zero(t, refused, "the server refused streams")
	assert.Len(t, accepted, wireTotal)
	assert.Len(t, messages, 3*wireTotal)
	requireWindow(t, accepted, wireN, wireW)
	assert.Equal(t, grpcthrottle.Stats{Sent: wireTotal}, it.Stats())
	assert.Zero(t, bucket.Stats().Held, "tokens still held after every stream answered")
}

// echoStream sends n messages on a Bidi stream, reading each echo, and
// reads the stream to its end.
func echoStream(ctx context.Context, cc *grpc.ClientConn, n int) error {
	cs, err := cc.NewStream(ctx, &bidiDesc, bidiMethod)
	if err != nil {
		return err
	}
	for i := range n {
		if err := cs.SendMsg(wrapperspb.String(fmt.Sprint(i))); err != nil {
			return fmt.Errorf("SendMsg %d: %w", i, err)
		}
		out := new(wrapperspb.StringValue)
		if err := cs.RecvMsg(out); err != nil {
			return fmt.Errorf("RecvMsg %d: %w", i, err)
		}
	}
	if err := cs.CloseSend(); err != nil {
		return err
	}
	if err := cs.RecvMsg(new(wrapperspb.StringValue)); err == nil {
		return fmt.Errorf("a message after CloseSend")
	} else if err.Error() != "EOF" {
		return err
	}
	return nil
}
