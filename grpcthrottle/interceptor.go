package grpcthrottle

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/attempt"
	"github.com/rxthrottle/rxthrottle/internal/limitererr"
)

// Interceptor keeps a gRPC client within a quota, as the server counts it.
// Every RPC first waits, with its own context, for a token of an
// rxthrottle.Limiter (a *rxthrottle.Bucket, a *redisstore.Bucket shared by
// several processes, any Limiter), holds it while the RPC is in flight, and
// releases it when the server's answer is back: the token renews one
// window after that, so the server sees at most the limiter's quota arrive
// in any window whatever the network does on the way (SPEC.md, "Held
// tokens: renewal on completion"). A unary RPC's answer is its response or
// its status; a stream's is the first thing the server sends back (its
// headers, a message or its status).
//
// An RPC whose context ends while it waits for its token consumes none and
// fails with CANCELED or DEADLINE_EXCEEDED (errors.Is sees the context's
// error too); one whose request was never written gives its token back. An
// RPC that fails without an answer after its request may have been written
// (its context ended in flight, its connection broke) keeps its token held:
// the request can still arrive; unless the server closed or reset the
// connection (grpc-go's "error reading from server"), on a direct
// connection: then nothing of it can, and the token is released at once
// (not with WithStrictInFlightBound, for a proxy). A unary RPC whose caller gives up in flight
// gets its error at once but is kept open (WithMaxKeptOpen), and its token
// is released when the server is done with it: its late answer, its reset
// of the stream (a grpc-go server resets it at the deadline the caller
// sent), or its close of the connection (WithStrictInFlightBound waits for
// the answer only, behind a proxy); any other token held so renews one
// window after the in-flight bound (WithInFlightBound,
// DefaultInFlightBound) has passed, at which a kept-open RPC is cancelled.
// A stream whose caller gives up before the server's first answer is kept
// open likewise where that is sound (see Stream). To know
// whether a request was written and answered, the Interceptor reads gRPC's
// stats for the RPC: install its StatsHandler on the same ClientConn
// (DialOptions does all three). Without it, the status code decides, and
// any failure gRPC makes on the client keeps the token held.
//
// The Interceptor also listens to the server. A RESOURCE_EXHAUSTED or
// UNAVAILABLE status with a google.rpc.RetryInfo detail, or a
// grpc-retry-pushback-ms trailer (PushbackHeader), pauses the limiter until
// then, so every other RPC waits too instead of being refused in turn, as
// httpthrottle's Transport does with 429 and Retry-After. Pauses are capped
// by WithMaxPause. Retrying a refused unary RPC is opt-in (gRPC does not
// say which methods may run twice): WithMaxAttempts;
// each attempt holds a token of its own, and WithRetryBudget caps their
// share. gRPC's own retries (a retryPolicy in the service config) re-send
// an RPC below the interceptor, under its one token: the server counts two
// arrivals for one token. Disable them on every throttled ClientConn
// (grpc.WithDisableRetry()) and use WithMaxAttempts instead. gRPC's
// transparent retries, which that leaves on, re-send only an RPC that never
// left or that the server did not process (a refused stream, a GOAWAY):
// no second arrival.
//
// Build one with New. An Interceptor is safe for concurrent use, like the
// limiter it wraps; one Interceptor may serve several ClientConns.
type Interceptor struct {
	l   rxthrottle.Limiter
	cfg config

	holds    attempt.Holds    // tokens held past their errors
	keptOpen attempt.KeptOpen // RPCs kept open after their caller gave up
	budget   attempt.Counter  // WithRetryBudget's, shared over the limiter; nil without

	sent, cancelled, pushbacks, retries, pushbackErrors, unwritten, overBudget atomic.Uint64
	lateAnswers, peerCloses, keptOpenTotal, failed                             atomic.Uint64
}

// New returns an Interceptor that makes every RPC wait for a token of l,
// held until the RPC's answer (see Interceptor). It reads the options
// WithClock, WithMaxPause, WithMaxAttempts, WithRetryBudget,
// WithTokenPerMessage, WithInFlightBound, WithMaxKeptOpen,
// WithStrictInFlightBound, OnPushback and OnBadPushback. A nil l, a nil option or
// a bad option value is an error.
func New(l rxthrottle.Limiter, opts ...Option) (*Interceptor, error) {
	if isNil(l) {
		return nil, errors.New("grpcthrottle: New: the Limiter is nil")
	}
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	i := &Interceptor{l: l, cfg: cfg}
	i.budget = cfg.policy.BudgetFor(l, func() time.Duration {
		if ls := l.Limits(); len(ls) > 0 { // a Limiter of none breaks its contract: not a panic here
			return ls[0].Window
		}
		return 0
	})
	return i, nil
}

// isNil reports whether v is nil or a nil pointer in an interface, which
// would otherwise pass the nil check and panic on the first RPC.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// DialOptions returns the options that put i on a ClientConn: its unary
// and stream interceptors (chained after any others) and its
// StatsHandler:
//
//	conn, err := grpc.NewClient(target, append(it.DialOptions(), creds)...)
func (i *Interceptor) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(i.Unary),
		grpc.WithChainStreamInterceptor(i.Stream),
		grpc.WithStatsHandler(i.StatsHandler()),
	}
}

// StatsHandler returns the stats.Handler that tells i whether each RPC's
// request was written and answered (see Interceptor). It only looks at
// RPCs that went through i's interceptors.
func (i *Interceptor) StatsHandler() stats.Handler { return tracker{i} }

// Unary is a grpc.UnaryClientInterceptor: it waits for a token, invokes
// the RPC with the token held, pauses the limiter if the answer says so,
// decides the token's fate (see Interceptor) and, with WithMaxAttempts,
// retries a RESOURCE_EXHAUSTED.
func (i *Interceptor) Unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if i == nil || i.l == nil {
		return errZero
	}
	var refused error // the last refusal, returned if its retry is over the budget
	for n := 1; ; n++ {
		a, actx, err := i.take(ctx, method)
		if err != nil {
			return err
		}
		if n == 1 {
			i.budget.First(i.cfg.clock.Now())
		} else if !i.budget.Retry(i.cfg.clock.Now()) { // WithRetryBudget: the refusal is the answer
			a.tok.Cancel()
			i.sent.Add(^uint64(0)) // it was not sent
			i.overBudget.Add(1)
			return refused
		} else {
			i.retries.Add(1)
		}
		var trailer metadata.MD
		if keepsOpen(ctx, reply, opts) {
			err = i.invokeOpen(ctx, actx, a, reply, &trailer, func(octx context.Context, own any, tr *metadata.MD) error {
				return invoker(octx, method, req, own, cc, append(opts[:len(opts):len(opts)], grpc.Trailer(tr))...)
			})
		} else {
			callOpts := append(opts[:len(opts):len(opts)], grpc.Trailer(&trailer))
			err = i.call(a, func() error { return invoker(actx, method, req, reply, cc, callOpts...) })
			i.end(a, err, trailer)
		}
		if status.Code(err) != codes.ResourceExhausted || !i.cfg.retries || !i.cfg.policy.Retry(n) || ctx.Err() != nil {
			return err
		}
		refused = err
	}
}

// call runs f with a's token held. If f panics, the panic goes on and
// the token lingers: what f did on the wire is unknown.
func (i *Interceptor) call(a *rpcAttempt, f func() error) error {
	returned := false
	defer func() {
		if !returned {
			i.end(a, errPanicked, nil)
		}
	}()
	err := f()
	returned = true
	return err
}

var errPanicked = status.Error(codes.Unknown, "grpcthrottle: the invoker or streamer panicked")

// take waits for the token of one attempt at method and returns the
// attempt with the context to make it under. A context that has already
// ended is refused before the limiter is asked, so that it cannot take a
// free token; one that ends as the token comes gives it back.
func (i *Interceptor) take(ctx context.Context, method string) (*rpcAttempt, context.Context, error) {
	tok, err := i.acquire(ctx, method)
	if err != nil {
		return nil, nil, err
	}
	a := &rpcAttempt{tok: tok}
	i.sent.Add(1)
	return a, context.WithValue(ctx, attemptKey{i}, a), nil
}

// acquire waits for one token of i's limiter for ctx, or fails with a
// waitError, the token given back if ctx ended as it came; counted in
// Failed if the limiter failed (limitererr.Failed), in Cancelled otherwise.
func (i *Interceptor) acquire(ctx context.Context, method string) (rxthrottle.Token, error) {
	err := ctx.Err()
	var tok rxthrottle.Token
	if err == nil {
		tok, err = i.l.Acquire(ctx)
	}
	if err == nil {
		if err = ctx.Err(); err != nil {
			tok.Cancel()
		}
	}
	if err != nil {
		if limitererr.Failed(ctx, err) {
			i.failed.Add(1)
		} else {
			i.cancelled.Add(1)
		}
		return rxthrottle.Token{}, &waitError{method: method, err: err}
	}
	return tok, nil
}

// end pauses the limiter if err's status asks for it, and then, once
// per attempt, decides the fate of a's token by err: the pause is in place
// before the token is back.
func (i *Interceptor) end(a *rpcAttempt, err error, trailer metadata.MD) {
	var st *status.Status
	if err != nil {
		st = status.Convert(err)
		i.listen(st, trailer)
	}
	if !a.ended.CompareAndSwap(false, true) {
		return
	}
	if err == nil {
		a.tok.Release()
		return
	}
	switch a.failed(st.Code()) {
	case release:
		a.tok.Release()
	case giveBack:
		a.tok.Cancel()
		i.unwritten.Add(1)
	case linger:
		if !i.cfg.policy.StrictInFlightBound && peerClosed(err) { // nothing of it can arrive now
			i.holds.PastError(i.cfg.clock, 0, a.tok.Release)
			i.peerCloses.Add(1)
			return
		}
		i.holds.PastError(i.cfg.clock, i.cfg.policy.InFlightBound, a.tok.Release)
	}
}

// listen pauses the limiter until the instant st and its trailer ask for,
// capped at the maximum pause.
func (i *Interceptor) listen(st *status.Status, trailer metadata.MD) {
	now := i.cfg.clock.Now()
	until := pushbackFor(st, trailer, now, i.badPushback)
	if !until.After(now) {
		return
	}
	if wait, most := until.Sub(now), i.cfg.policy.MaxPause; wait > most {
		i.badPushback(fmt.Errorf("%w: %s asks for a pause of %v, more than the maximum %v; pausing %v",
			ErrBadPushback, st.Code(), wait, most, most))
		until = now.Add(most)
	}
	i.l.Pause(until)
	i.pushbacks.Add(1)
	if i.cfg.onPushback != nil {
		i.cfg.onPushback(st.Code(), until)
	}
}

// badPushback counts and reports a retry delay the Interceptor ignored or
// capped.
func (i *Interceptor) badPushback(err error) {
	i.pushbackErrors.Add(1)
	i.cfg.onBadPushback(err)
}
