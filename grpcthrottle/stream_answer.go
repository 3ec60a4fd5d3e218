package grpcthrottle

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

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
	gone    bool               // the caller's context has ended
	inside  int                // the caller's calls inside the stream that only its end returns
	pending <-chan readOutcome // the outcome of a RecvMsg left pending at the caller's end
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
	switch err {
	case io.EOF:
		s.i.end(s.a, nil, nil)
	case errPanicked: // the token lingers: what the stream did is unknown
		s.i.end(s.a, err, nil)
	default:
		s.i.end(s.a, err, s.ClientStream.Trailer())
	}
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
