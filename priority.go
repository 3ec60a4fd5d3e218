package rxthrottle

import "context"

// priorityKey is the context key of WithPriority.
type priorityKey struct{}

// WithPriority returns a copy of ctx that carries priority p for every
// limiter it is given to (SPEC.md, "Priorities"): among the callers
// waiting at an instant, the highest priority goes first, then the earliest
// arrival (tenants of WithTenant share within a priority), so an urgent
// call (a user waiting) goes before background work under one quota. The
// default is 0; negative priorities go after it. Every
// blocking method of rxthrottle's limiters honours it (Wait, WaitN, Acquire,
// AcquireN, and so an httpthrottle.Transport request's context), the window
// and every other rule unchanged; a priority never takes a token already
// granted. Sustained higher-priority load can delay lower priorities
// without bound: that is what priorities are for. A nil ctx gives nil (a
// limiter then reports the nil context).
//
// The operators read it from the context given to Observe
// (rxgo.WithContext): every item of the subscription has that priority
// (Throttle and ThrottleWith, ThrottleBy and ThrottleByWith), which orders
// it against the other callers of a shared limiter. Bucket.Reserve takes no
// context: its reservations have priority 0.
func WithPriority(ctx context.Context, p int) context.Context {
	if ctx == nil {
		return nil
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom returns the priority WithPriority put in ctx, or 0 if none
// (or ctx is nil). Limiters outside this package (such as redisstore's)
// read it to order their own callers.
func PriorityFrom(ctx context.Context) int {
	if ctx == nil {
		return 0
	}
	p, _ := ctx.Value(priorityKey{}).(int)
	return p
}
