package rxthrottle

import (
	"context"
	"math"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// tenantKey is the context key of WithTenant.
type tenantKey struct{}

// tenant is what WithTenant puts in a context.
type tenant struct {
	key    string
	weight float64
}

// WithTenant returns a copy of ctx that names the tenant the call is made
// for, with its weight, for every limiter it is given to (SPEC.md, "Fair
// shares"): one quota shared by many users of a service. While callers
// wait, the tokens go to the tenants in proportion to their weights (a
// tenant of weight 2 gets twice the share of one of weight 1), each
// tenant's callers in the order they called; a tenant with no caller
// waiting keeps no credit, so its share goes to the others at once.
// Priorities (WithPriority) come first: tenants share within a priority.
// The window and every other rule are unchanged, and nothing is refused
// or dropped for fairness; callers of one tenant are the FIFO schedule.
//
// Callers without a tenant all belong to the default tenant "" of weight
// 1. A weight that is not a positive finite number counts as 1. The
// weight is the caller's own: callers of one tenant normally give the
// same. A nil ctx gives nil (a limiter then reports the nil context).
//
// Every blocking method of rxthrottle's limiters honours it (Wait, WaitN,
// Acquire, AcquireN, and so an httpthrottle.Transport request's context);
// the operators read it from the context given to Observe
// (rxgo.WithContext), for every item of the subscription. Bucket.Reserve
// takes no context: its reservations are of the default tenant.
func WithTenant(ctx context.Context, key string, weight float64) context.Context {
	if ctx == nil {
		return nil
	}
	return context.WithValue(ctx, tenantKey{}, tenant{key, validWeight(weight)})
}

// TenantFrom returns the tenant and weight WithTenant put in ctx, or "" and
// 1 if none (or ctx is nil). Limiters outside this package (such as
// redisstore's) read it to order their own callers.
func TenantFrom(ctx context.Context) (key string, weight float64) {
	if ctx == nil {
		return "", 1
	}
	t, ok := ctx.Value(tenantKey{}).(tenant)
	if !ok {
		return "", 1
	}
	return t.key, t.weight
}

// validWeight returns w, or 1 if it is not a positive finite number.
func validWeight(w float64) float64 {
	if !(w > 0) || math.IsInf(w, 1) {
		return 1
	}
	return w
}

// callerOf returns what orders a caller with ctx in a queue: its priority
// and tenant (its cost is set when it is queued).
func callerOf(ctx context.Context) fairq.Caller {
	key, w := TenantFrom(ctx)
	return fairq.Caller{Prio: PriorityFrom(ctx), Tenant: key, Weight: w}
}
