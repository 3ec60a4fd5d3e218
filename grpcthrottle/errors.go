package grpcthrottle

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rxthrottle/rxthrottle"
)

// waitError is the error of an RPC that never left because it got no
// token: its context ended while it waited, the limiter refused it (its
// deadline comes before any token could, its queue is full), or the
// limiter failed. It is a gRPC status error (status.Code reads CANCELED,
// DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED for a full queue, UNAVAILABLE
// otherwise, as for an RPC that gRPC itself could not start) that also
// unwraps to the cause, so errors.Is(err, context.Canceled) and the
// limiter's sentinels (rxthrottle.ErrDeadline, rxthrottle.ErrQueueFull)
// work too.
type waitError struct {
	method string
	err    error
}

func (e *waitError) Error() string {
	return fmt.Sprintf("grpcthrottle: %s: no token: %v", e.method, e.err)
}

func (e *waitError) Unwrap() error { return e.err }

// GRPCStatus makes e a status error for status.FromError and status.Code.
func (e *waitError) GRPCStatus() *status.Status {
	code := codes.Unavailable
	switch {
	case errors.Is(e.err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(e.err, context.Canceled):
		code = codes.Canceled
	case errors.Is(e.err, rxthrottle.ErrQueueFull):
		code = codes.ResourceExhausted
	}
	return status.New(code, e.Error())
}

// errZero is the error of a zero or nil Interceptor.
var errZero = status.Error(codes.Internal, "grpcthrottle: Interceptor used without New")
