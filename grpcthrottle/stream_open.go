package grpcthrottle

import (
	"context"
	"errors"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// A stream whose caller gives up before the server's first answer (its
// context ends) follows the unary rule (open.go) where it can be sound:
// the stream runs under a context of its own (openContext, with the
// caller's deadline), the caller gets its error at once, and the stream
// stays open behind it until the first of: the server's headers or status
// (the stats handler's InHeader or InTrailer), a message, or the reset of
// the stream or close of the connection that a RecvMsg still pending at
// the give-up returns, or one that reads for the caller who had none
// pending (not with WithStrictInFlightBound); else the
// in-flight bound, where the stream is cancelled and the token released.
// After that first sign the stream is cancelled: its caller has gone.
//
// What makes it sound: before the first answer a RecvMsg of a protobuf
// message reads into a message of its own, on a goroutine of its own, so
// that it can return at the caller's end without anything writing into
// the caller's memory later (the message is copied in when it comes
// first); Header likewise. A stream given up while a call of the caller
// is still inside the stream (a SendMsg held by flow control, a RecvMsg
// of a message that is not protobuf) cannot be left open, since only the
// stream's end returns that call: it is cancelled at once and its token
// held for the bound, as before. So is one beyond WithMaxKeptOpen. After
// the first answer, nothing is kept: the caller's end cancels the stream.

// errCallerGone is the cause with which a kept-open stream is cancelled
// once the server is done with it: its caller has gone.
var errCallerGone = errors.New("grpcthrottle: the stream's caller gave up")

// keepsStreamOpen reports whether a stream opened under ctx may be kept
// open after its caller gives up.
func (i *Interceptor) keepsStreamOpen(ctx context.Context) bool {
	return ctx.Done() != nil && i.cfg.policy.InFlightBound > 0 && i.cfg.policy.MaxKeptOpen > 0
}

// callerErr is the error a call of the stream returns once its caller's
// context has ended, returned once callerGone has decided what becomes of
// the stream, so that the caller sees the token's fate decided.
func (s *clientStream) callerErr() error {
	<-s.decided
	return s.ctxErr()
}

// ctxErr is the status error of the caller's context's end.
func (s *clientStream) ctxErr() error { return status.FromContextError(s.ctx.Err()).Err() }

// enter marks a call of the caller inside the underlying stream, one that
// only the stream's end returns (see above); it reports false, having
// marked nothing, once the caller has gone. leave undoes it.
func (s *clientStream) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return false
	}
	s.inside++
	return true
}

func (s *clientStream) leave() {
	s.mu.Lock()
	s.inside--
	s.mu.Unlock()
}

// recvOwn is RecvMsg before the first answer of a stream that may be
// kept open: the underlying RecvMsg reads into a message of its own on a
// goroutine, which the caller's end leaves pending (pending), for keep to
// read its outcome. A panic of that RecvMsg (an interceptor below) is
// raised again on the caller's goroutine while the caller waits, as it
// would have been without the goroutine; after the give-up it is no sign.
func (s *clientStream) recvOwn(m proto.Message) error {
	own := m.ProtoReflect().New().Interface()
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return s.callerErr()
	}
	r := attempt.Go(func() (struct{}, error) { return struct{}{}, s.ClientStream.RecvMsg(own) }, errPanicked)
	s.pending = r
	s.mu.Unlock()
	select {
	case o := <-r:
		s.mu.Lock()
		s.pending = nil
		s.mu.Unlock()
		if o.Panicked != nil {
			s.ended(errPanicked)
			panic(o.Panicked)
		}
		if o.Err != nil {
			s.ended(o.Err)
			return o.Err
		}
		proto.Reset(m)
		proto.Merge(m, own)
		s.answer()
		return nil
	case <-s.ctx.Done():
		return s.callerErr()
	}
}

// headerOwn is Header before the first answer of a stream that may be
// kept open: the underlying Header waits on a goroutine, so that the
// caller's end returns it (a panic is raised again as in recvOwn).
func (s *clientStream) headerOwn() (metadata.MD, error) {
	r := attempt.Go(s.ClientStream.Header, errPanicked)
	select {
	case h := <-r:
		if h.Panicked != nil {
			s.ended(errPanicked)
			panic(h.Panicked)
		}
		return s.header(h.Value, h.Err)
	case <-s.ctx.Done():
		return nil, s.callerErr()
	}
}

// callerGone runs when the caller's context ends, for a stream that may be
// kept open: after the first answer it cancels the stream, as the
// caller's context would have; before it, it keeps the stream open (keep)
// if it can, else cancels it and decides the token's fate as for an RPC
// that failed then.
func (s *clientStream) callerGone() {
	defer close(s.decided)
	s.mu.Lock()
	s.gone = true
	inside, pending := s.inside > 0, s.pending
	s.mu.Unlock()
	err := s.ctxErr()
	i, a := s.i, s.a
	if a.ended.Load() { // answered, or over: the caller's end is the stream's
		s.cancel(context.Cause(s.ctx))
		return
	}
	written := a.written.Load()
	if inside || !written || !i.keptOpen.Keep(i.cfg.policy.MaxKeptOpen) {
		s.cancel(context.Cause(s.ctx))
		i.end(a, err, nil)
		return
	}
	if !a.ended.CompareAndSwap(false, true) { // answered meanwhile
		i.keptOpen.Done()
		s.cancel(context.Cause(s.ctx))
		return
	}
	i.keptOpenTotal.Add(1)
	s.keep(pending)
}

// keep holds the stream's token until the server's first sign that it has
// the stream (see above) or the bound, then cancels the stream.
func (s *clientStream) keep(pending <-chan readOutcome) {
	i, a := s.i, s.a
	if pending == nil {
		pending = s.readGone()
	}
	hold := i.holds.PastError(i.cfg.clock, i.cfg.policy.InFlightBound, func() {
		s.cancel(errBoundPassed)
		a.tok.Release()
	})
	go func() {
		defer i.keptOpen.Done()
		defer s.cancel(errCallerGone)
		select {
		case <-a.answerCh:
		case o := <-pending:
			err := o.Err
			switch {
			case o.Panicked == nil && (err == nil || a.answered.Load()):
				if err != nil { // a late status: its pushback is in place before the token is back
					i.listen(status.Convert(err), s.ClientStream.Trailer())
				}
			case o.Panicked != nil || i.cfg.policy.StrictInFlightBound || !serverReset(err) && !peerClosed(err):
				select { // the stream is over, not answered: the bound decides
				case <-a.answerCh:
				case <-s.open.Done():
					return
				}
			case peerClosed(err):
				if hold.End() {
					i.peerCloses.Add(1)
				}
				return
			}
		case <-s.open.Done(): // the bound passed
			return
		}
		if hold.End() {
			i.lateAnswers.Add(1)
		}
	}()
}

// readGone reads the stream for its caller, who gave up with no RecvMsg
// pending (between its SendMsg and its RecvMsg, or in Header): nobody
// else would read the stream, so the server's reset of it or close of the
// connection would go unseen, and the token wait for the bound. Nothing of
// the caller's can enter the stream any more (gone), so this read is the
// stream's only one. The caller's message type is not known here: the
// read is into an Empty, which keeps any protobuf message's fields as
// unknown ones (a codec that cannot decode into it fails the read after
// the server's headers, which answered already). A panic of an
// interceptor below (one that asserts the message's type) is no sign:
// the bound decides.
func (s *clientStream) readGone() <-chan readOutcome {
	return attempt.Go(func() (struct{}, error) { return struct{}{}, s.ClientStream.RecvMsg(new(emptypb.Empty)) }, errPanicked)
}

// readOutcome is what a read of the stream on a goroutine of ours gave,
// or the panic it raised.
type readOutcome = attempt.Outcome[struct{}]
