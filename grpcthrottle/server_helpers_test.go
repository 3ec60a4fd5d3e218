package grpcthrottle_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The test service, written out as protoc-gen-go-grpc would: a unary
// method and a bidirectional stream of StringValues, so that the tests
// need no generated code.
const (
	unaryMethod = "/rxthrottle.test.Test/Unary"
	bidiMethod  = "/rxthrottle.test.Test/Bidi"
)

var bidiDesc = grpc.StreamDesc{StreamName: "Bidi", ServerStreams: true, ClientStreams: true}

// testServer is a real grpc-go server on a loopback TCP port that counts
// the arrivals of RPCs (and of stream messages) in an exact sliding log,
// the way the strictest APIs count: an RPC that would be the (N+1)-th
// accepted arrival in a half-open window [t, t+W) is refused with
// RESOURCE_EXHAUSTED and never reaches the handler.
type testServer struct {
	addr string
	n    int
	w    time.Duration

	// handle answers an accepted unary RPC; nil echoes.
	handle func(ctx context.Context, in string) (string, error)
	// quotaMessages makes stream messages count against the quota too.
	quotaMessages bool
	// replyDelay, if set, is how long bidi waits (ignoring its context)
	// before it echoes a message.
	replyDelay func() time.Duration

	mu       sync.Mutex
	accepted []time.Time // arrivals of accepted RPCs, in order
	messages []time.Time // arrivals of stream messages
	refused  int
}

// startServer starts a testServer with quota n per w on 127.0.0.1 and
// stops it when the test ends.
func startServer(t *testing.T, n int, w time.Duration, handle func(ctx context.Context, in string) (string, error)) *testServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return startServerOn(t, lis, n, w, handle)
}

// startServerOn is startServer on lis.
func startServerOn(t *testing.T, lis net.Listener, n int, w time.Duration, handle func(ctx context.Context, in string) (string, error)) *testServer {
	t.Helper()
	ts := &testServer{addr: lis.Addr().String(), n: n, w: w, handle: handle}
	srv := grpc.NewServer(grpc.UnaryInterceptor(ts.countUnary), grpc.StreamInterceptor(ts.countStream))
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "rxthrottle.test.Test",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			info := &grpc.UnaryServerInfo{FullMethod: unaryMethod}
			return icpt(ctx, in, info, func(ctx context.Context, req any) (any, error) {
				return ts.unary(ctx, req.(*wrapperspb.StringValue))
			})
		}}},
		Streams: []grpc.StreamDesc{{StreamName: "Bidi", ServerStreams: true, ClientStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
			return ts.bidi(ss)
		}}},
	}, nil)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return ts
}

// arrive logs an arrival now in log, or, if enforce and the arrival is
// over the quota, refuses it.
func (ts *testServer) arrive(log *[]time.Time, enforce bool) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := time.Now()
	inWindow := 0
	for i := len(*log) - 1; i >= 0 && (*log)[i].After(now.Add(-ts.w)); i-- {
		inWindow++
	}
	if enforce && inWindow >= ts.n {
		ts.refused++
		return false
	}
	*log = append(*log, now)
	return true
}

var errRefused = status.Error(codes.ResourceExhausted, "test server: over quota")

func (ts *testServer) countUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if !ts.arrive(&ts.accepted, true) {
		return nil, errRefused
	}
	return h(ctx, req)
}

func (ts *testServer) countStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if !ts.arrive(&ts.accepted, true) {
		return errRefused
	}
	return h(srv, ss)
}

func (ts *testServer) unary(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	if ts.handle == nil {
		return in, nil
	}
	out, err := ts.handle(ctx, in.GetValue())
	if err != nil {
		return nil, err
	}
	return wrapperspb.String(out), nil
}

// bidi echoes each message. Each message is an arrival in the messages
// log, under the same quota; with quotaMessages, one over it ends the
// stream with RESOURCE_EXHAUSTED.
func (ts *testServer) bidi(ss grpc.ServerStream) error {
	for {
		in := new(wrapperspb.StringValue)
		if err := ss.RecvMsg(in); err != nil {
			if errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled {
				return err
			}
			return nil // io.EOF: the client closed its side
		}
		if !ts.arrive(&ts.messages, ts.quotaMessages) {
			return errRefused
		}
		if ts.replyDelay != nil {
			time.Sleep(ts.replyDelay())
		}
		if err := ss.SendMsg(in); err != nil {
			return err
		}
	}
}

// stats returns copies of the logs and the refusals.
func (ts *testServer) stats() (accepted, messages []time.Time, refused int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]time.Time(nil), ts.accepted...), append([]time.Time(nil), ts.messages...), ts.refused
}

// dial returns a ClientConn to ts with opts, closed when the test ends.
func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	cc, err := grpc.NewClient(addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// call makes one unary RPC with in.
func call(ctx context.Context, cc *grpc.ClientConn, in string) (string, error) {
	out := new(wrapperspb.StringValue)
	err := cc.Invoke(ctx, unaryMethod, wrapperspb.String(in), out)
	return out.GetValue(), err
}

// requireWindow checks that at most n of the instants fall in any
// half-open window of length w.
func requireWindow(t *testing.T, at []time.Time, n int, w time.Duration) {
	t.Helper()
	for i := n; i < len(at); i++ {
		require.GreaterOrEqualf(t, at[i].Sub(at[i-n]), w,
			"arrivals %d and %d are %v apart: %d arrivals in a window of %v", i-n, i, at[i].Sub(at[i-n]), n+1, w)
	}
}

// eventually polls cond until it holds; the tests use it only for states
// that must come (a caller queued), never to wait out a duration.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
