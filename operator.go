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
// Error items pass through in their place without consuming a token; the
// output completes right after the last item is emitted. Cancel the context
// given with rxgo.WithContext to Observe to stop it: every goroutine it
// started ends. Throttle reads the options of NewBucket; with an invalid
// limit or option, the Observable emits one error item saying what is wrong.
func Throttle(limit Limit, opts ...Option) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			b, err := NewBucket(limit, opts...)
			if err != nil {
				rxgo.Error(err).SendContext(ctx, next)
				return
			}
			forward(ctx, src, b, next)
		}})
	}
}

// ThrottleWith returns an rxgo operator like Throttle that takes its tokens
// from l, so several pipelines (and plain Wait callers) share one quota:
// items from all of them go in the order they reach l. l may be a *Bucket or
// any other Limiter, such as a Redis-backed one. With a nil l, the
// Observable emits one error item.
func ThrottleWith(l Limiter) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			if l == nil {
				rxgo.Error(errNilLimiter).SendContext(ctx, next)
				return
			}
			forward(ctx, src, l, next)
		}})
	}
}

var errNilLimiter = errors.New("rxthrottle: ThrottleWith(nil): a Limiter is required")

// holder is a Limiter that can grant a token before the item is emitted and
// record the emission when it happens. *Bucket is one; with other limiters
// the operator records the emission when Wait returns.
type holder interface {
	wait(ctx context.Context, hold bool) error
	commit()
	giveBack()
}

// forward moves the items of src to next, each after a token of l, until src
// completes or ctx ends.
func forward(ctx context.Context, src rxgo.Observable, l Limiter, next chan<- rxgo.Item) {
	h, _ := l.(holder)
	in := src.Observe(rxgo.WithContext(ctx))
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
		if item.Error() {
			if !item.SendContext(ctx, next) {
				return
			}
			continue
		}
		if h == nil {
			if l.Wait(ctx) != nil || !item.SendContext(ctx, next) {
				return
			}
			continue
		}
		if h.wait(ctx, true) != nil {
			return
		}
		if !item.SendContext(ctx, next) {
			h.giveBack()
			return
		}
		h.commit()
	}
}
