package grpcthrottle_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// fakeStream is a ClientStream whose server answers after serve, with
// headers, then echoes, and ends with end.
type fakeStream struct {
	grpc.ClientStream // nil: methods not overridden are not called
	ctx               context.Context
	h                 stats.Handler
	start             time.Time
	end               error

	mu    sync.Mutex
	sends []time.Duration
}

func (s *fakeStream) Context() context.Context { return s.ctx }

func (s *fakeStream) SendMsg(any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sends = append(s.sends, time.Since(s.start))
	return nil
}

func (s *fakeStream) Header() (metadata.MD, error) {
	s.h.HandleRPC(s.ctx, &stats.InHeader{Client: true})
	return metadata.MD{}, nil
}

func (s *fakeStream) RecvMsg(any) error {
	select {
	case <-s.ctx.Done():
		return status.FromContextError(s.ctx.Err()).Err()
	default:
	}
	return s.end
}

func (s *fakeStream) Trailer() metadata.MD { return nil }

// openFake opens a stream through it over a fakeStream.
func openFake(t *testing.T, it *grpcthrottle.Interceptor, ctx context.Context, end error) (grpc.ClientStream, *fakeStream) {
	t.Helper()
	var fs *fakeStream
	cs, err := it.Stream(ctx, &bidiDesc, nil, "/t/S", func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		h := it.StatsHandler()
		ctx = h.TagRPC(ctx, &stats.RPCTagInfo{})
		h.HandleRPC(ctx, &stats.OutHeader{Client: true})
		fs = &fakeStream{ctx: ctx, h: h, start: time.Now(), end: end}
		return fs, nil
	})
	require.NoError(t, err)
	return cs, fs
}

// With WithTokenPerMessage, each message waits for a token of its own:
// the stream's token, released at its headers, and one per message, each
// renewing W after its SendMsg.
func TestVirtualTokenPerMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket, grpcthrottle.WithTokenPerMessage())
		require.NoError(t, err)
		cs, fs := openFake(t, it, context.Background(), io.EOF)
		_, err = cs.Header()
		require.NoError(t, err)
		for range 3 {
			require.NoError(t, cs.SendMsg(nil))
		}
		assert.Equal(t, secs(1, 2, 3), fs.sends)
		assert.Equal(t, io.EOF, cs.RecvMsg(nil))
		assert.Equal(t, grpcthrottle.Stats{Sent: 4}, it.Stats())
		assert.Zero(t, bucket.Stats().Held)
	})
}

// Without it, messages take no token: the stream's alone counts.
func TestVirtualTokenPerStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket)
		require.NoError(t, err)
		cs, fs := openFake(t, it, context.Background(), io.EOF)
		for range 3 {
			require.NoError(t, cs.SendMsg(nil))
		}
		assert.Equal(t, secs(0, 0, 0), fs.sends)
		assert.Equal(t, 1, bucket.Stats().Held, "the stream's token is released before an answer")
		assert.Equal(t, io.EOF, cs.RecvMsg(nil))
		assert.Zero(t, bucket.Stats().Held)
	})
}

// A stream cancelled before any answer keeps its token until the arrival
// bound; the next stream goes W after that.
func TestVirtualStreamCancelLingers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, 10*time.Second))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket, grpcthrottle.WithInFlightBound(5*time.Second))
		require.NoError(t, err)
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		openFake(t, it, ctx, io.EOF)
		time.Sleep(time.Second)
		cancel() // nobody reads the stream: the context's end decides
		synctest.Wait()
		assert.Equal(t, 1, bucket.Stats().Held)
		openFake(t, it, context.Background(), io.EOF)
		assert.Equal(t, 16*time.Second, time.Since(start))
		assert.Equal(t, uint64(1), it.Stats().HeldPastError)
	})
}

// A stream ending with RESOURCE_EXHAUSTED and RetryInfo pauses the
// limiter, even after its token was released at its headers.
func TestVirtualStreamPushback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket)
		require.NoError(t, err)
		start := time.Now()
		cs, _ := openFake(t, it, context.Background(), retryInfo(t, codes.ResourceExhausted, 3*time.Second))
		_, err = cs.Header()
		require.NoError(t, err)
		assert.Equal(t, codes.ResourceExhausted, status.Code(cs.RecvMsg(nil)))
		assert.Equal(t, codes.ResourceExhausted, status.Code(cs.RecvMsg(nil)), "a second RecvMsg")
		openFake(t, it, context.Background(), io.EOF)
		assert.Equal(t, 3*time.Second, time.Since(start))
		assert.Equal(t, uint64(1), it.Stats().Pushbacks, "one end, one pushback")
	})
}
