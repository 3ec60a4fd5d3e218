package grpcthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// ctxLimiter is a Limiter whose Acquire ends as take says, with the
// caller's context and its cancel.
type ctxLimiter struct {
	failingLimiter
	take func(ctx context.Context, cancel context.CancelFunc) error
	stop context.CancelFunc
}

func (l ctxLimiter) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, l.take(ctx, l.stop)
}

// An RPC the limiter failed counts in Failed, apart from Cancelled: a
// store's outage, even one whose error wraps context.DeadlineExceeded while
// the RPC's context is live, is not a caller that gave up. The limiter's
// refusals and a context that ended count in Cancelled, as before. For a
// unary RPC and a stream.
func TestStatsFailed(t *testing.T) {
	down := errors.New("store down")
	storeTimeout := fmt.Errorf("redis: %w", context.DeadlineExceeded)
	for _, tc := range []struct {
		name              string
		take              func(ctx context.Context, cancel context.CancelFunc) error
		failed, cancelled uint64
	}{
		{"store down", func(context.Context, context.CancelFunc) error { return down }, 1, 0},
		{"store timed out, context live", func(context.Context, context.CancelFunc) error { return storeTimeout }, 1, 0},
		{"deadline refusal", func(context.Context, context.CancelFunc) error {
			return fmt.Errorf("%w: %w", rxthrottle.ErrDeadline, context.DeadlineExceeded)
		}, 0, 1},
		{"queue full", func(context.Context, context.CancelFunc) error { return rxthrottle.ErrQueueFull }, 0, 1},
		{"too many keys", func(context.Context, context.CancelFunc) error {
			return fmt.Errorf("rxthrottle: %w: key k", rxthrottle.ErrTooManyKeys)
		}, 0, 1},
		{"context ended while waiting", func(ctx context.Context, cancel context.CancelFunc) error {
			cancel()
			return ctx.Err()
		}, 0, 1},
		{"store failed as the context ended", func(_ context.Context, cancel context.CancelFunc) error {
			cancel()
			return down
		}, 0, 1},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				it, err := grpcthrottle.New(ctxLimiter{take: tc.take, stop: cancel})
				require.NoError(t, err)
				if stream {
					_, err = it.Stream(ctx, &bidiDesc, nil, "/t/M", func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
						t.Error("the stream was opened")
						return nil, errors.New("opened")
					})
				} else {
					err = it.Unary(ctx, "/t/M", nil, nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
						t.Error("the RPC was sent")
						return nil
					})
				}
				require.Error(t, err)
				s := it.Stats()
				assert.Equal(t, tc.failed, s.Failed, "Failed")
				assert.Equal(t, tc.cancelled, s.Cancelled, "Cancelled")
				assert.Zero(t, s.Sent, "Sent")
				figures := map[string]float64{}
				for _, f := range s.Figures() {
					figures[f.Name] = f.Value
				}
				assert.Equal(t, float64(tc.failed), figures["grpc.failed"])
			})
		}
	}
}
