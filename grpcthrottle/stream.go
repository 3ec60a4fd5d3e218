package grpcthrottle

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Stream is a grpc.StreamClientInterceptor: it waits for a token, opens
// the stream with the token held, and releases the token at the server's
// first answer on the stream (its headers, a message or its status), after
// pausing the limiter if the status says so: the token pays for the
// stream's arrival at the server. With WithTokenPerMessage, each SendMsg
// also waits for a token of its own.
//
// A stream whose caller's context ends before the server's first answer
// is kept open behind it, as a unary RPC is (WithMaxKeptOpen counts both):
// the stream runs on a context of its own with the caller's deadline, the
// caller's calls return its context's error at once, and the token is
// released at the server's late headers, message or status, or at its
// reset of the stream or close of the connection, seen by a RecvMsg
// pending at the give-up or, with none pending, by a read of the
// interceptor's own (not with WithStrictInFlightBound), else at the
// in-flight bound, where the stream is cancelled; it is cancelled too once
// the token is released. A RecvMsg before the first answer reads into a
// message of its own (the caller's must be a protobuf message) and copies
// it in. A stream given up while a SendMsg of the caller is held in the
// stream (flow control), or while a RecvMsg of a message that is not
// protobuf is, is cancelled at once and its token held for the bound, as
// is one beyond WithMaxKeptOpen or with an in-flight bound of 0.
//
// As gRPC asks, end every stream (read it to its status, or cancel its
// context): a stream left open with no answer keeps its token until the
// limiter's hold timeout.
func (i *Interceptor) Stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if i == nil || i.l == nil {
		return nil, errZero
	}
	a, actx, err := i.take(ctx, method)
	if err != nil {
		return nil, err
	}
	s := &clientStream{i: i, a: a, ctx: ctx, method: method}
	sctx := actx
	if i.keepsStreamOpen(ctx) { // stream_open.go
		base, cancel := context.WithCancelCause(context.WithoutCancel(actx))
		dl, timed := ctx.Deadline()
		sctx = openContext{Context: base, deadline: dl, timed: timed}
		s.open, s.cancel, s.decided = sctx, cancel, make(chan struct{})
		a.answerCh = make(chan struct{})
	}
	var cs grpc.ClientStream
	err = i.call(a, func() error {
		var err error
		cs, err = streamer(sctx, desc, cc, method, opts...)
		return err
	})
	if err != nil {
		if s.cancel != nil {
			s.cancel(nil)
		}
		i.end(a, err, nil)
		return nil, err
	}
	s.ClientStream = cs
	if s.cancel != nil {
		s.stopWatch = context.AfterFunc(ctx, s.callerGone)
		return s, nil
	}
	// The answer may never be read: when the stream's context ends first,
	// the token's fate is decided as for an RPC that failed then.
	s.stopWatch = context.AfterFunc(ctx, func() { i.end(a, status.FromContextError(ctx.Err()).Err(), nil) })
	return s, nil
}
