package grpcthrottle

import (
	"context"
	"io"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Stream is a grpc.StreamClientInterceptor: it waits for a token, opens
// the stream with the token held, and releases the token at the server's
// first answer on the stream (its headers, a message or its status), after
// pausing the limiter if the status says so. A stream whose context ends
// before an answer keeps its token held as an unanswered unary RPC does
// (see Interceptor). With WithTokenPerMessage, each SendMsg also waits for
// a token of its own.
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
	var cs grpc.ClientStream
	err = i.call(a, func() error {
		var err error
		cs, err = streamer(actx, desc, cc, method, opts...)
		return err
	})
	if err != nil {
		i.end(a, err, nil)
		return nil, err
	}
	s := &clientStream{ClientStream: cs, i: i, a: a, ctx: ctx, method: method}
	// The answer may never be read: when the stream's context ends first,
	// the token's fate is decided as for an RPC that failed then.
	s.stopWatch = context.AfterFunc(ctx, func() { i.end(a, status.FromContextError(ctx.Err()).Err(), nil) })
	return s, nil
}

// clientStream is a stream with its attempt's token held until the
// server's first answer.
type clientStream struct {
	grpc.ClientStream
	i         *Interceptor
	a         *rpcAttempt
	ctx       context.Context
	method    string
	stopWatch func() bool
	over      atomic.Bool // RecvMsg or Header has returned the stream's end
}

// answer releases the stream's token: the server has the stream.
func (s *clientStream) answer() {
	s.stopWatch()
	s.i.end(s.a, nil, nil)
}

// ended handles the stream's end, reported by RecvMsg or Header as err:
// a pause the status asks for, and the token's fate if still open.
func (s *clientStream) ended(err error) {
	if !s.over.CompareAndSwap(false, true) {
		return
	}
	s.stopWatch()
	if err == io.EOF {
		s.i.end(s.a, nil, nil)
		return
	}
	s.i.end(s.a, err, s.ClientStream.Trailer())
}

// RecvMsg receives a message; the first message, or the stream's status,
// is the answer that releases the stream's token.
func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		s.ended(err)
		return err
	}
	s.answer()
	return nil
}

// Header returns the stream's header metadata; headers from the server
// are an answer that releases the stream's token. A stream that ended
// without headers (nil, nil) is left to RecvMsg, which reads its status and
// so the pause it may ask for before the token is back.
func (s *clientStream) Header() (metadata.MD, error) {
	md, err := s.ClientStream.Header()
	switch {
	case err != nil:
		s.ended(err)
	case md != nil:
		s.answer()
	}
	return md, err
}

// SendMsg sends a message; with WithTokenPerMessage it first waits for a
// token for it, held until gRPC has the message, and given back if SendMsg
// fails (the message was not sent). A wait that fails (the stream's
// context ended, the limiter failed) returns its status error and sends
// nothing; cancel the stream then.
func (s *clientStream) SendMsg(m any) error {
	if !s.i.cfg.perMessage {
		return s.ClientStream.SendMsg(m)
	}
	tok, err := s.i.acquire(s.ctx, s.method)
	if err != nil {
		return err
	}
	s.i.sent.Add(1)
	if err := s.ClientStream.SendMsg(m); err != nil {
		tok.Cancel()
		s.i.unwritten.Add(1)
		return err
	}
	tok.Release()
	return nil
}
