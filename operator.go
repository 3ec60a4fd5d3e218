package rxthrottle

import (
	"context"
	"errors"

	"github.com/reactivex/rxgo/v2"
)

// Throttle returns an rxgo operator that lets the items of an Observable
// through at most limit (and every WithLimit) allows, losing none: each item
// waits for a token, in order, and goes at the earliest instant of SPEC.md's
// schedule. An item counts as emitted when the downstream has received it,
// so a slow consumer cannot make the window leak.
//
// The operator is lazy: nothing runs before Observe, and each Observe gets
// its own Bucket (use ThrottleWith to share one quota between pipelines).
// Error items pass through in their place without consuming a token, and
// the stream goes on behind them (whether it ends there is the source's
// choice); the output completes right after the last item is emitted.
// Cancel the context given with rxgo.WithContext to Observe to stop it:
// every goroutine it started ends. Throttle reads the options of NewBucket;
// with an invalid limit or option, or a nil source, the Observable emits
// one error item saying what is wrong.
func Throttle(limit Limit, opts ...Option) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			b, err := NewBucket(limit, opts...)
			if err != nil {
				rxgo.Error(err).SendContext(ctx, next)
				return
			}
			// The bucket is this subscription's alone.
			run(ctx, "Throttle", src, &emitter{g: b.items(), private: true, op: "Throttle"}, next)
		}})
	}
}

// ThrottleWith returns an rxgo operator like Throttle that takes its tokens
// from l, so several pipelines (and plain Wait callers) share one quota:
// items from all of them go in the order they reach l. l may be a *Bucket or
// any other Limiter, such as a Redis-backed one; either way an item holds
// its token until the downstream has received it (another Limiter's is a
// Token of Acquire, released then), so the token renews one window after
// the item's emission. A Token of Acquire has a hold timeout (l's
// HoldTimeout method's, else DefaultHoldTimeout): an item the downstream
// has not taken within half of it gives its Token back unused and takes a
// new one, in its place, before it is offered again, so that no item is
// emitted under a Token that has timed out (its token would be back a
// window after the timeout, before a window after the emission). With a
// nil l (or a nil *Bucket), or a nil source, the Observable emits one
// error item.
//
// If l fails (it returns an error while the subscription is live, as a
// Redis-backed limiter does during an outage), the item that waited is not
// emitted: in its place the output emits one error item, which says which
// item got no token and wraps l's error (errors.Is finds it), and then
// completes, and the source is cancelled. This is rxgo's default error
// strategy, rxgo.StopOnError, by which an operator whose own step fails
// emits the error and stops; a limiter that fails once is likely to fail
// for the next items too, and a quiet completion would lose them. (A
// Limiter that panics is handled the same way, with a *PanicError.)
// Cancelling Observe's context is not a failure: the output just ends.
func ThrottleWith(l Limiter) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			if isNil(l) {
				rxgo.Error(errNilLimiter).SendContext(ctx, next)
				return
			}
			if b, ok := l.(*Bucket); ok {
				if err := usableBucket("ThrottleWith", b); err != nil {
					rxgo.Error(err).SendContext(ctx, next)
					return
				}
				run(ctx, "ThrottleWith", src, &emitter{g: b.items(), op: "ThrottleWith"}, next)
				return
			}
			run(ctx, "ThrottleWith", src, &holdForwarder{l: l, r: renewalOf(l)}, next)
		}})
	}
}

var errNilLimiter = errors.New("rxthrottle: ThrottleWith(nil): a Limiter is required")

// forwarder moves the items of in to next until in closes, ctx ends or the
// limiter fails.
type forwarder interface {
	run(ctx context.Context, in <-chan rxgo.Item, next chan<- rxgo.Item)
}

// run subscribes to src and runs f on it. It cancels the subscription when
// f returns, so that a source f stops reading (its limiter failed) does not
// block forever.
//
// f runs with ctx, not with the subscription's context: until f returns,
// the two end together, and when ctx can never end (Observe without
// rxgo.WithContext), its Done channel is nil, so each of f's selects waits
// on one channel instead of two, as an rxgo operator does.
func run(ctx context.Context, op string, src rxgo.Observable, f forwarder, next chan<- rxgo.Item) {
	srcCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	in, err := observe(srcCtx, op, src)
	if err != nil {
		rxgo.Error(err).SendContext(ctx, next)
		return
	}
	f.run(ctx, in, next)
}

// holdForwarder forwards items through any Limiter but a *Bucket: each
// item holds a Token of Acquire until the downstream has received it, and
// then releases it, so the token renews a window after the item's
// emission, as the emitter's do (an item counts as emitted when the
// downstream has it). An item the downstream never takes gives its token
// back; one it is slow to take changes Tokens before its hold can time
// out (operator_renew.go).
type holdForwarder struct {
	l    Limiter
	r    renewal
	seen int // items read, for error messages
}

func (f *holdForwarder) run(ctx context.Context, in <-chan rxgo.Item, next chan<- rxgo.Item) {
	for {
		var item rxgo.Item
		var ok bool
		select {
		case <-ctx.Done():
			return
		case item, ok = <-in:
			if !ok {
				return
			}
		}
		f.seen++
		if item.Error() { // an error item takes no token
			if !item.SendContext(ctx, next) {
				return
			}
			continue
		}
		tok, err := f.acquire(ctx)
		if err == nil {
			var sent bool
			if sent, err = sendHeld(ctx, f.r, next, item, tok, f.r.clock.Now(), func() (Token, error) { return f.acquire(ctx) }); sent {
				continue
			}
		}
		if err != nil && !stopped(ctx) {
			rxgo.Error(err).SendContext(ctx, next)
		}
		return
	}
}

// acquire takes a token of f.l, turning its failure or panic into the
// error item to emit.
func (f *holdForwarder) acquire(ctx context.Context) (tok Token, err error) {
	defer func() {
		if err2 := recovered(recover(), "ThrottleWith: the Limiter", f.seen); err2 != nil {
			tok, err = Token{}, err2
		}
	}()
	tok, err = f.l.Acquire(ctx)
	if err != nil {
		return Token{}, errNoToken("ThrottleWith", f.seen, err)
	}
	return tok, nil
}
