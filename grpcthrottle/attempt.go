package grpcthrottle

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"

	"github.com/rxthrottle/rxthrottle"
)

// rpcAttempt is one RPC attempt with its held token, and what the
// Interceptor's stats handler saw of it on the wire.
type rpcAttempt struct {
	tok rxthrottle.Token

	tagged   atomic.Bool   // the stats handler saw the attempt start
	written  atomic.Bool   // its headers went to the transport (stats.OutHeader)
	payload  atomic.Bool   // a message went to the transport (stats.OutPayload)
	sentMsg  chan struct{} // closed at the payload, for an RPC that may be kept open; else nil
	answered atomic.Bool   // the server sent headers or a status (InHeader, InTrailer)
	answerCh chan struct{} // closed at the answer, for a stream that may be kept open; else nil
	ended    atomic.Bool   // the token's fate is decided
}

// outcome is what becomes of an attempt's token when the RPC failed.
type outcome int

const (
	release  outcome = iota // the server answered: the token renews W from now
	giveBack                // the request was never written: no token used
	linger                  // it may still arrive: held until it cannot
)

// failed decides the fate of a's token after the RPC failed with code.
// With the stats handler in place it knows: an answer from the server is a
// completion; a request never handed to the transport gives its token
// back; one handed over and not answered may still arrive. Without it,
// the code is all there is: CANCELED, DEADLINE_EXCEEDED, UNAVAILABLE,
// INTERNAL and UNKNOWN are what gRPC makes on the client after a request
// may have been written, so those linger; any other code came from the
// server, which therefore has the request.
func (a *rpcAttempt) failed(code codes.Code) outcome {
	if a.tagged.Load() {
		switch {
		case a.answered.Load():
			return release
		case !a.written.Load():
			return giveBack
		}
		return linger
	}
	switch code {
	case codes.Canceled, codes.DeadlineExceeded, codes.Unavailable, codes.Internal, codes.Unknown:
		return linger
	}
	return release
}

// attemptKey is the context key of an Interceptor's attempt: one per
// Interceptor, so that two chained Interceptors (two limiters) each find
// their own.
type attemptKey struct{ i *Interceptor }

// tracker is the stats.Handler that tells an Interceptor what happened to
// its attempts on the wire. It only reads the attempt the interceptor put
// in the RPC's context; RPCs without one (made on a ClientConn without the
// interceptors) are ignored.
type tracker struct{ i *Interceptor }

var _ stats.Handler = tracker{}

func (h tracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	if a, ok := ctx.Value(attemptKey(h)).(*rpcAttempt); ok {
		a.tagged.Store(true)
	}
	return ctx
}

func (h tracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	a, ok := ctx.Value(attemptKey(h)).(*rpcAttempt)
	if !ok {
		return
	}
	switch s.(type) {
	case *stats.OutHeader:
		a.written.Store(true)
	case *stats.OutPayload:
		if a.payload.CompareAndSwap(false, true) && a.sentMsg != nil {
			close(a.sentMsg)
		}
	case *stats.InHeader, *stats.InTrailer:
		if a.answered.CompareAndSwap(false, true) && a.answerCh != nil {
			close(a.answerCh)
		}
	}
}

func (tracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (tracker) HandleConn(context.Context, stats.ConnStats)                       {}
