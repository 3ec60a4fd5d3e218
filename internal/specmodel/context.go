package specmodel

import (
	"context"
	"time"
)

// Context returns the context of caller it in a run that started at start:
// with its priority (put there by withPriority, rxthrottle.WithPriority),
// and ended at its Cancel by a deadline or, for a plain cancellation, by a
// cancel function called then. The drivers of every limiter's property
// tests share it, so they end their callers alike.
func Context(start time.Time, it Item, withPriority func(context.Context, int) context.Context) (context.Context, context.CancelFunc) {
	return FairContext(start, it, withPriority, nil)
}

// FairContext is Context that also puts the caller's tenant and weight in
// it with withTenant (rxthrottle.WithTenant), if the caller has a tenant.
func FairContext(start time.Time, it Item, withPriority func(context.Context, int) context.Context,
	withTenant func(context.Context, string, float64) context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if it.Priority != 0 {
		ctx = withPriority(ctx, it.Priority)
	}
	if it.Tenant != "" && withTenant != nil {
		ctx = withTenant(ctx, it.Tenant, it.Weight)
	}
	switch {
	case it.Cancel < 0:
	case it.PlainCancel:
		ctx, cancel = context.WithCancel(ctx)
		stop := time.AfterFunc(time.Until(start.Add(it.Cancel)), cancel)
		return ctx, func() { stop.Stop(); cancel() }
	default:
		ctx, cancel = context.WithDeadline(ctx, start.Add(it.Cancel))
	}
	return ctx, cancel
}
