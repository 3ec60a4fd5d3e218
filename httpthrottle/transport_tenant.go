package httpthrottle

import (
	"context"
	"net/http"

	"github.com/rxthrottle/rxthrottle"
)

// TenantFunc names the tenant a request is sent for (a user of the
// service, a customer of a shared API key) and its weight, for the fair
// shares of the limiter's quota (rxthrottle.WithTenant; SPEC.md, "Fair
// shares"). It must be safe for concurrent use.
type TenantFunc func(r *http.Request) (tenant string, weight float64)

type tenantOption struct{ f TenantFunc }

func (o tenantOption) apply(c *transportConfig) { c.tenant = o.f }

// WithTenantFunc makes the Transport give the limiter each request under
// the tenant f names, as rxthrottle.WithTenant on the request's context
// would: while requests wait, each tenant gets a share of the tokens in
// proportion to its weight, its own requests in the order they came, so
// one tenant's backlog does not hold back every other tenant's requests.
// It suits code that knows the tenant from the request (a header the
// service sets, a path) rather than from the context. f is called once
// for each attempt, before it waits for its token; its tenant replaces any
// the request's context names (a TenantFunc that defers to the context
// starts with rxthrottle.TenantFrom(r.Context())). A weight that is not a
// positive finite number counts as 1. nil, the default, leaves the
// request's context as it is.
//
// ThrottleMap and the Keyed limiter take their tenant from a context
// (Observe's, the caller's): a ThrottleMap stream waits for one item's
// token at a time, so its items' tenant is the stream's.
func WithTenantFunc(f TenantFunc) TransportOption { return tenantOption{f} }

// limiterContext returns the context req waits for its token under: the
// request's own, under WithTenantFunc's tenant if there is one.
func (t *Transport) limiterContext(req *http.Request) context.Context {
	ctx := req.Context()
	if t.cfg.tenant == nil {
		return ctx
	}
	tenant, weight := t.cfg.tenant(req)
	return rxthrottle.WithTenant(ctx, tenant, weight)
}
