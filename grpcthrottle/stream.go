package grpcthrottle

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
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
// reset of the stream or close of the connection that a RecvMsg pending
// at the give-up returns (not with WithStrictInFlightBound), else at the
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

	// A stream that may be kept open after its caller gave up
	// (stream_open.go): its own context and what ends it; nil otherwise.
	open    context.Context
	cancel  context.CancelCauseFunc
	decided chan struct{} // closed once callerGone has run

	mu      sync.Mutex
	gone    bool         // the caller's context has ended
	inside  int          // the caller's calls inside the stream that only its end returns
	pending <-chan error // the outcome of a RecvMsg left pending at the caller's end
}

// answer releases the stream's token: the server has the stream. A
// stream that may be kept open keeps watching its caller's context, whose
// end cancels it.
func (s *clientStream) answer() {
	if s.cancel == nil {
		s.stopWatch()
	}
	s.i.end(s.a, nil, nil)
}

// ended handles the stream's end, reported by RecvMsg or Header as err:
// a pause the status asks for, and the token's fate if still open.
func (s *clientStream) ended(err error) {
	if !s.over.CompareAndSwap(false, true) {
		return
	}
	if s.stopWatch() && s.decided != nil {
		close(s.decided) // callerGone will not run: nothing is left to decide
	}
	if err == io.EOF {
		s.i.end(s.a, nil, nil)
		return
	}
	s.i.end(s.a, err, s.ClientStream.Trailer())
}

// RecvMsg receives a message; the first message, or the stream's status,
// is the answer that releases the stream's token.
func (s *clientStream) RecvMsg(m any) error {
	if s.cancel != nil {
		if pm, ok := m.(proto.Message); ok && !s.a.ended.Load() {
			return s.recvOwn(pm)
		}
		if !s.enter() {
			return s.callerErr()
		}
		defer s.leave()
	}
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		err = s.ownErr(err)
		s.ended(err)
		return err
	}
	s.answer()
	return nil
}

// ownErr is err, or, for a stream of its own context whose caller's
// context has ended, the caller's error: the stream ended for it.
func (s *clientStream) ownErr(err error) error {
	if s.cancel != nil && s.ctx.Err() != nil {
		return s.callerErr()
	}
	return err
}

// Header returns the stream's header metadata; headers from the server
// are an answer that releases the stream's token. A stream that ended
// without headers (nil, nil) is left to RecvMsg, which reads its status and
// so the pause it may ask for before the token is back.
func (s *clientStream) Header() (metadata.MD, error) {
	if s.cancel != nil && !s.a.ended.Load() {
		return s.headerOwn()
	}
	md, err := s.ClientStream.Header()
	return s.header(md, s.ownErr(err))
}

// header is what Header does with the underlying stream's answer.
func (s *clientStream) header(md metadata.MD, err error) (metadata.MD, error) {
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
		return s.sendMsg(m)
	}
	tok, err := s.i.acquire(s.ctx, s.method)
	if err != nil {
		return err
	}
	s.i.sent.Add(1)
	if err := s.sendMsg(m); err != nil {
		tok.Cancel()
		s.i.unwritten.Add(1)
		return err
	}
	tok.Release()
	return nil
}

// sendMsg is the underlying SendMsg, inside the stream (enter) for one
// that may be kept open.
func (s *clientStream) sendMsg(m any) error {
	if s.cancel != nil {
		if !s.enter() {
			return s.callerErr()
		}
		defer s.leave()
	}
	return s.ownErr(s.ClientStream.SendMsg(m))
}
