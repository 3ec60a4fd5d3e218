package grpcthrottle_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// newClient returns a bucket of n per w, an Interceptor over it with
// opts, and a ClientConn to addr through it.
func newClient(t *testing.T, addr string, n int, w time.Duration, opts ...grpcthrottle.Option) (*rxthrottle.Bucket, *grpcthrottle.Interceptor, *grpc.ClientConn) {
	t.Helper()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(n, w))
	require.NoError(t, err)
	it, err := grpcthrottle.New(bucket, opts...)
	require.NoError(t, err)
	return bucket, it, dial(t, addr, it.DialOptions()...)
}

// A token is held across a slow handler: the next RPC waits for the
// answer, and reaches the server at least W after the handler returned.
func TestHeldAcrossSlowHandler(t *testing.T) {
	const w = 100 * time.Millisecond
	arrived, proceed := make(chan struct{}), make(chan struct{})
	var handlerDone time.Time
	ts := startServer(t, 1, w, func(ctx context.Context, in string) (string, error) {
		if in == "slow" {
			close(arrived)
			<-proceed
			handlerDone = time.Now()
		}
		return in, nil
	})
	bucket, _, cc := newClient(t, ts.addr, 1, w)

	var wg sync.WaitGroup
	wg.Go(func() { _, err := call(context.Background(), cc, "slow"); assert.NoError(t, err) })
	<-arrived
	wg.Go(func() { _, err := call(context.Background(), cc, "next"); assert.NoError(t, err) })
	eventually(t, "the second RPC queued", func() bool { return bucket.Stats().Queued == 1 })
	assert.Equal(t, 1, bucket.Stats().Held, "the slow RPC's token is not held")
	close(proceed)
	wg.Wait()

	accepted, _, refused := ts.stats()
	require.Len(t, accepted, 2)
	assert.Zero(t, refused)
	assert.GreaterOrEqual(t, accepted[1].Sub(handlerDone), w, "the next RPC arrived within W of the slow one's answer")
}

// retryInfo returns a RESOURCE_EXHAUSTED status error asking the client to
// wait d.
func retryInfo(t *testing.T, code codes.Code, d time.Duration) error {
	t.Helper()
	st, err := status.New(code, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
	require.NoError(t, err)
	return st.Err()
}

// A RESOURCE_EXHAUSTED with RetryInfo, or with the pushback trailer, pauses
// the limiter: the next RPC reaches the server no sooner than the delay
// after the refusal, and OnPushback hears of it.
func TestResourceExhaustedPauses(t *testing.T) {
	const delay = 150 * time.Millisecond
	for _, tc := range []struct {
		name   string
		refuse func(ctx context.Context) error
	}{
		{"RetryInfo", func(context.Context) error { return retryInfo(t, codes.ResourceExhausted, delay) }},
		{"UnavailableRetryInfo", func(context.Context) error { return retryInfo(t, codes.Unavailable, delay) }},
		{"PushbackTrailer", func(ctx context.Context) error {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(grpcthrottle.PushbackHeader, "150"))
			return status.Error(codes.ResourceExhausted, "slow down")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refusedAt time.Time
			ts := startServer(t, 100, time.Second, func(ctx context.Context, in string) (string, error) {
				if in == "refuse" {
					refusedAt = time.Now()
					return "", tc.refuse(ctx)
				}
				return in, nil
			})
			var pushed []codes.Code
			var mu sync.Mutex
			_, it, cc := newClient(t, ts.addr, 100, time.Second, grpcthrottle.OnPushback(func(code codes.Code, until time.Time) {
				mu.Lock()
				defer mu.Unlock()
				pushed = append(pushed, code)
			}))
			_, err := call(context.Background(), cc, "refuse")
			code := status.Code(err)
			require.Contains(t, []codes.Code{codes.ResourceExhausted, codes.Unavailable}, code, "err = %v", err)
			_, err = call(context.Background(), cc, "next")
			require.NoError(t, err)

			accepted, _, _ := ts.stats()
			require.Len(t, accepted, 2)
			assert.GreaterOrEqual(t, accepted[1].Sub(refusedAt), delay, "the next RPC did not wait out the pause")
			assert.Equal(t, []codes.Code{code}, pushed)
			assert.Equal(t, uint64(1), it.Stats().Pushbacks)
		})
	}
}

// WithMaxAttempts retries a RESOURCE_EXHAUSTED after its pause, with a
// token of its own.
func TestRetryAfterPause(t *testing.T) {
	const delay = 100 * time.Millisecond
	var mu sync.Mutex
	var refusedAt time.Time
	ts := startServer(t, 100, time.Second, func(ctx context.Context, in string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if refusedAt.IsZero() {
			refusedAt = time.Now()
			return "", retryInfo(t, codes.ResourceExhausted, delay)
		}
		return in, nil
	})
	bucket, it, cc := newClient(t, ts.addr, 100, time.Second, grpcthrottle.WithMaxAttempts(2))
	out, err := call(context.Background(), cc, "x")
	require.NoError(t, err)
	assert.Equal(t, "x", out)
	accepted, _, _ := ts.stats()
	require.Len(t, accepted, 2)
	assert.GreaterOrEqual(t, accepted[1].Sub(refusedAt), delay)
	assert.Equal(t, grpcthrottle.Stats{Sent: 2, Pushbacks: 1, Retries: 1}, it.Stats())
	assert.Equal(t, uint64(2), bucket.Stats().Admitted)
}

// Cancellation at each point of a unary RPC: before the wait, during the
// wait, in flight after the server has the request, and for a request
// never written (no server).
func TestCancelUnary(t *testing.T) {
	inFlight := make(chan struct{}, 1)
	ts := startServer(t, 100, time.Second, func(ctx context.Context, in string) (string, error) {
		if in == "block" {
			inFlight <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		}
		return in, nil
	})

	t.Run("BeforeWait", func(t *testing.T) {
		bucket, it, cc := newClient(t, ts.addr, 1, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := call(ctx, cc, "x")
		assert.Equal(t, codes.Canceled, status.Code(err))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, rxthrottle.Stats{Free: 1}, bucket.Stats(), "a cancelled RPC took a token")
		assert.Equal(t, grpcthrottle.Stats{Cancelled: 1}, it.Stats())
	})

	t.Run("DuringWait", func(t *testing.T) {
		bucket, it, cc := newClient(t, ts.addr, 1, time.Hour)
		require.NoError(t, bucket.Wait(context.Background())) // the hour's one token
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error)
		go func() { _, err := call(ctx, cc, "x"); errc <- err }()
		eventually(t, "the RPC queued", func() bool { return bucket.Stats().Queued == 1 })
		cancel()
		err := <-errc
		assert.Equal(t, codes.Canceled, status.Code(err))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, uint64(1), bucket.Stats().Cancelled)
		assert.Equal(t, grpcthrottle.Stats{Cancelled: 1}, it.Stats())
	})

	t.Run("DeadlineBeforeToken", func(t *testing.T) {
		bucket, it, cc := newClient(t, ts.addr, 1, time.Hour)
		require.NoError(t, bucket.Wait(context.Background())) // the hour's one token
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := call(ctx, cc, "x")
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "err = %v", err)
		assert.ErrorIs(t, err, rxthrottle.ErrDeadline)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, grpcthrottle.Stats{Cancelled: 1}, it.Stats())
	})

	t.Run("QueueFull", func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Hour), rxthrottle.WithMaxQueue(1))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket, grpcthrottle.WithMaxAttempts(3))
		require.NoError(t, err)
		cc := dial(t, ts.addr, it.DialOptions()...)
		require.NoError(t, bucket.Wait(context.Background())) // the hour's one token
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _, _ = call(ctx, cc, "queued") }()
		eventually(t, "the first RPC queued", func() bool { return bucket.Stats().Queued == 1 })
		_, err = call(context.Background(), cc, "x")
		assert.Equal(t, codes.ResourceExhausted, status.Code(err), "err = %v", err)
		assert.ErrorIs(t, err, rxthrottle.ErrQueueFull)
		assert.Zero(t, it.Stats().Retries, "a local refusal is not retried")
	})

	t.Run("InFlight", func(t *testing.T) {
		bucket, it, cc := newClient(t, ts.addr, 5, time.Hour, grpcthrottle.WithInFlightBound(50*time.Millisecond))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { _, err := call(ctx, cc, "block"); errc <- err }()
		<-inFlight
		cancel()
		err := <-errc
		assert.Equal(t, codes.Canceled, status.Code(err))
		// Returned, but held: the request could still be on its way.
		assert.Equal(t, 1, bucket.Stats().Held, "an RPC cancelled in flight gave its token back")
		// Kept open (the handler blocks until its context ends) until the
		// bound, which cancels it.
		assert.Equal(t, grpcthrottle.Stats{Sent: 1, ErrorsAfterWrite: 1, HeldPastError: 1, HoldingPastError: 1, KeptOpen: 1, KeptOpenTotal: 1}, it.Stats())
		eventually(t, "the in-flight bound to release the token", func() bool { return bucket.Stats().Held == 0 })
		eventually(t, "the RPC kept open to end", func() bool { return it.Stats().KeptOpen == 0 })
		assert.Zero(t, it.Stats().HoldingPastError)
		assert.Zero(t, it.Stats().LateAnswers, "the bound, not an answer")
		assert.Equal(t, 4, bucket.Stats().Free, "the lingering token was given back instead of used")
	})

	t.Run("InFlightBoundZero", func(t *testing.T) {
		bucket, it, cc := newClient(t, ts.addr, 5, time.Hour, grpcthrottle.WithInFlightBound(0))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { _, err := call(ctx, cc, "block"); errc <- err }()
		<-inFlight
		cancel()
		<-errc
		got := bucket.Stats()
		assert.Equal(t, uint64(1), got.Released, "the token is released (used) at the error")
		got.Released, got.TotalHold = 0, 0
		assert.Equal(t, rxthrottle.Stats{Admitted: 1, Free: 4}, got, "a bound of 0 releases at the error")
		assert.Equal(t, grpcthrottle.Stats{Sent: 1, ErrorsAfterWrite: 1}, it.Stats())
	})

	t.Run("NeverWritten", func(t *testing.T) {
		addr := closedPort(t)
		bucket, it, cc := newClient(t, addr, 5, time.Hour)
		_, err := call(context.Background(), cc, "x")
		assert.Equal(t, codes.Unavailable, status.Code(err), "err = %v", err)
		assert.Equal(t, rxthrottle.Stats{Cancelled: 1, Free: 5}, bucket.Stats(), "an RPC never written used its token")
		assert.Equal(t, grpcthrottle.Stats{Sent: 1, ErrorsUnwritten: 1}, it.Stats())
	})

	t.Run("NeverWrittenWithoutStatsHandler", func(t *testing.T) {
		addr := closedPort(t)
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Hour))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket)
		require.NoError(t, err)
		cc := dial(t, addr, grpc.WithUnaryInterceptor(it.Unary))
		_, err = call(context.Background(), cc, "x")
		assert.Equal(t, codes.Unavailable, status.Code(err), "err = %v", err)
		assert.Equal(t, 1, bucket.Stats().Held, "without the stats handler, UNAVAILABLE may have been written: held")
		assert.Equal(t, grpcthrottle.Stats{Sent: 1, ErrorsAfterWrite: 1, HeldPastError: 1, HoldingPastError: 1}, it.Stats())
	})
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	return addr
}

// Cancellation of a stream: before the server answered, its token is
// held; after the first answer, it was released.
func TestCancelStream(t *testing.T) {
	ts := startServer(t, 100, time.Second, nil)
	for _, tc := range []struct {
		name     string
		answered bool
		held     int
	}{
		{"BeforeAnswer", false, 1},
		{"AfterAnswer", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket, it, cc := newClient(t, ts.addr, 5, time.Hour)
			ctx, cancel := context.WithCancel(context.Background())
			cs, err := cc.NewStream(ctx, &bidiDesc, bidiMethod)
			require.NoError(t, err)
			if tc.answered {
				require.NoError(t, cs.SendMsg(wrapperspb.String("x")))
				require.NoError(t, cs.RecvMsg(new(wrapperspb.StringValue)))
			} else {
				eventually(t, "the server to have the stream", func() bool { a, _, _ := ts.stats(); return len(a) > 0 })
			}
			cancel()
			err = cs.RecvMsg(new(wrapperspb.StringValue))
			assert.Equal(t, codes.Canceled, status.Code(err), "err = %v", err)
			assert.Equal(t, tc.held, bucket.Stats().Held, "%+v", it.Stats())
			if !tc.answered {
				assert.Equal(t, uint64(1), it.Stats().HeldPastError)
			}
			ts.mu.Lock()
			ts.accepted = nil
			ts.mu.Unlock()
		})
	}
}
