package grpcthrottle

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// A caller that gives up on a unary RPC in flight (its context ends) gets
// its error at once, but the RPC may still reach the server: its token
// stays held until it can no longer arrive (SPEC.md, "Requests on the
// wire"). So the RPC runs under a context of its own (openContext), and
// stays open after the caller left, until the first of:
//
//   - the server's late answer (its headers or status): the server has
//     the request, the token is released then;
//   - the server's reset of the stream (RST_STREAM; a grpc-go server resets
//     it at the deadline it was given): it had read the request's headers;
//   - the server's close or reset of the connection (gRPC's "error reading
//     from server"): nothing of the request can arrive on it any more;
//   - the in-flight bound: the RPC is cancelled then, and the token
//     released.
//
// The last two but one are not taken with WithStrictInFlightBound: behind
// a proxy, the reset or the close may be the proxy's. At most
// WithMaxKeptOpen RPCs are kept open so; beyond that, a given-up RPC is
// cancelled at once and its token held for the bound, as is one whose
// message had not been handed to the transport yet.

// errBoundPassed is the cause with which an RPC kept open after its caller
// gave up is cancelled once the in-flight bound has passed.
var errBoundPassed = errors.New("grpcthrottle: the in-flight bound passed with no answer")

// openContext is the context of an RPC that may outlive its caller: the
// caller's values and deadline, which gRPC sends to the server
// (grpc-timeout) so that the server stops when the caller wanted, but an
// end of its own (the embedded context's), which the caller's does not
// bring. grpc-go reads Deadline only for the header and for the text of a
// status; what ends the RPC on the client is Done.
type openContext struct {
	context.Context
	deadline time.Time
	timed    bool
}

func (c openContext) Deadline() (time.Time, bool) { return c.deadline, c.timed }

// unaryResult is what the invoker gave (Err), or the panic it raised.
type unaryResult = attempt.Outcome[struct{}]

// settled returns a channel that yields r.
func settled(r unaryResult) <-chan unaryResult {
	c := make(chan unaryResult, 1)
	c <- r
	return c
}

// keepsOpen reports whether a unary RPC with reply and opts can be kept
// open after its caller gave up: its context can end, its reply is a
// protobuf message (the RPC fills a copy of its own, so that a late
// answer writes nothing the caller has), and no call option writes into
// the caller's memory at the RPC's end (Header, Trailer, Peer, OnFinish).
func keepsOpen(ctx context.Context, reply any, opts []grpc.CallOption) bool {
	if ctx.Done() == nil {
		return false
	}
	if _, ok := reply.(proto.Message); !ok {
		return false
	}
	for _, o := range opts {
		switch o.(type) {
		case grpc.HeaderCallOption, *grpc.HeaderCallOption, grpc.TrailerCallOption, *grpc.TrailerCallOption,
			grpc.PeerCallOption, *grpc.PeerCallOption, grpc.OnFinishCallOption, *grpc.OnFinishCallOption:
			return false
		}
	}
	return true
}

// invokeOpen makes attempt a of a unary RPC whose caller can give up
// (keepsOpen): invoke runs on a goroutine of its own under an openContext,
// into a reply and a trailer of its own. If it returns while ctx lasts,
// its reply is the caller's and its end is decided as usual (end); if ctx
// ends first, the caller gets ctx's status error at once and the RPC is
// left to giveUp.
func (i *Interceptor) invokeOpen(ctx, actx context.Context, a *rpcAttempt, reply any, trailer *metadata.MD,
	invoke func(ctx context.Context, reply any, trailer *metadata.MD) error) error {
	base, cancel := context.WithCancelCause(context.WithoutCancel(actx))
	dl, timed := ctx.Deadline()
	octx := openContext{Context: base, deadline: dl, timed: timed}
	own := reply.(proto.Message).ProtoReflect().New().Interface()
	var ownTrailer metadata.MD
	a.sentMsg = make(chan struct{})
	done := attempt.Go(func() (struct{}, error) { return struct{}{}, invoke(octx, own, &ownTrailer) }, errPanicked)
	select {
	case r := <-done:
		defer cancel(nil)
		if r.Panicked != nil {
			i.end(a, errPanicked, nil)
			panic(r.Panicked)
		}
		if r.Err == nil {
			proto.Reset(reply.(proto.Message))
			proto.Merge(reply.(proto.Message), own)
		}
		*trailer = ownTrailer
		i.end(a, r.Err, ownTrailer)
		return r.Err
	case <-ctx.Done():
	}
	if a.written.Load() && !a.payload.Load() {
		// Between its headers and its message, the invoker may still be
		// reading the request: wait until it has handed the message over
		// (or returned), and keep it open then rather than hold its token
		// for the bound.
		select {
		case <-a.sentMsg:
		case r := <-done:
			done = settled(r)
		}
	}
	i.giveUp(a, done, octx, cancel, &ownTrailer)
	return status.FromContextError(ctx.Err()).Err()
}

// giveUp leaves a unary RPC whose caller gave up: one whose message was
// not handed to the transport yet, or with an in-flight bound of 0, is
// cancelled, and its token's fate
// decided as usual once the invoker has returned (the caller waits for
// that: the invoker may still be reading the request); one that was is
// kept open (keep), or beyond WithMaxKeptOpen cancelled with its token
// held for the bound.
func (i *Interceptor) giveUp(a *rpcAttempt, done <-chan unaryResult, octx context.Context, cancel context.CancelCauseFunc, trailer *metadata.MD) {
	keep := a.payload.Load() && i.cfg.policy.InFlightBound > 0
	if !keep || !i.keptOpen.Keep(i.cfg.policy.MaxKeptOpen) {
		cancel(context.Canceled)
		r := <-done
		if r.Panicked != nil {
			r.Err = errPanicked // the token lingers: what the invoker did is unknown
		}
		i.end(a, r.Err, *trailer) // nil: answered after all
		return
	}
	a.ended.Store(true) // its fate is keep's
	i.keptOpenTotal.Add(1)
	i.keep(a, done, octx, cancel, trailer)
}

// keep holds a's token until the server is done with the RPC (its late
// answer, its reset of the stream, its close of the connection) or the
// bound has passed, whichever comes first.
func (i *Interceptor) keep(a *rpcAttempt, done <-chan unaryResult, octx context.Context, cancel context.CancelCauseFunc, trailer *metadata.MD) {
	hold := i.holds.PastError(i.cfg.clock, i.cfg.policy.InFlightBound, func() {
		cancel(errBoundPassed)
		a.tok.Release()
	})
	go func() {
		defer i.keptOpen.Done()
		r := <-done
		defer cancel(nil)
		if r.Panicked != nil || context.Cause(octx) != nil {
			return // left to the bound
		}
		switch {
		case r.Err == nil || a.answered.Load():
			if r.Err != nil {
				i.listen(status.Convert(r.Err), *trailer) // a late pushback is in place before the token is back
			}
			if hold.End() {
				i.lateAnswers.Add(1)
			}
		case i.cfg.policy.StrictInFlightBound:
		case serverReset(r.Err):
			if hold.End() {
				i.lateAnswers.Add(1)
			}
		case peerClosed(r.Err):
			if hold.End() {
				i.peerCloses.Add(1)
			}
		}
	}()
}

// serverReset reports whether err is grpc-go's for a stream the server
// reset (RST_STREAM; CANCEL at the deadline it was given): the server had
// the stream's headers.
func serverReset(err error) bool {
	st := status.Convert(err)
	switch st.Code() {
	case codes.Canceled, codes.DeadlineExceeded:
		return strings.Contains(st.Message(), "stream terminated by RST_STREAM")
	}
	return false
}

// peerClosed reports whether err is grpc-go's for a connection that ended
// at a read of the client's (the server closed or reset it): nothing
// written on it can reach the server afterwards.
func peerClosed(err error) bool {
	st := status.Convert(err)
	return st.Code() == codes.Unavailable && strings.Contains(st.Message(), "error reading from server")
}
