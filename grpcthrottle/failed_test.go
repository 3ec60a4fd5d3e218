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
	"github.com/rxthrottle/rxthrottle/internal/limitererr/limitererrtest"
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
	for _, tc := range limitererrtest.Cases() {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.Name, stream), func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				it, err := grpcthrottle.New(ctxLimiter{take: tc.Take, stop: cancel})
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
				failed := uint64(0)
				if tc.Failed {
					failed = 1
				}
				assert.Equal(t, failed, s.Failed, "Failed")
				assert.Equal(t, 1-failed, s.Cancelled, "Cancelled")
				assert.Zero(t, s.Sent, "Sent")
				figures := map[string]float64{}
				for _, f := range s.Figures() {
					figures[f.Name] = f.Value
				}
				assert.Equal(t, float64(failed), figures["grpc.failed"])
			})
		}
	}
}
