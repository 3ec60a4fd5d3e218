package httpthrottle_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// byUserHeader is a TenantFunc: the tenant is the X-User header, the
// weight the X-Weight header (1 if absent).
func byUserHeader(r *http.Request) (string, float64) {
	w, err := strconv.ParseFloat(r.Header.Get("X-Weight"), 64)
	if err != nil {
		w = 1
	}
	return r.Header.Get("X-User"), w
}

// tenantRequest is one request of tenantSchedule: its X-User and
// X-Weight headers, and the tenant its context names ("" for none).
type tenantRequest struct {
	user, weight, ctxTenant string
}

// tenantSchedule sends reqs in order through a Transport over a Bucket
// (or a Keyed limiter's key) of Per(1, time.Second) whose token of the
// first second is taken, each once the one before waits, on virtual time, and returns the instants
// each user's requests reached the base (by X-User).
func tenantSchedule(t *testing.T, keyed bool, reqs []tenantRequest, opts ...httpthrottle.TransportOption) map[string][]time.Duration {
	t.Helper()
	sent := map[string][]time.Duration{}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			label := r.Header.Get("X-User")
			if t, _ := rxthrottle.TenantFrom(r.Context()); t != "" && t != label {
				label += "/" + t
			}
			mu.Lock()
			sent[label] = append(sent[label], time.Since(start))
			mu.Unlock()
			return respond(r, http.StatusOK, nil), nil
		})
		opts = append(opts, httpthrottle.WithBase(base))
		var tr *httpthrottle.Transport
		var err error
		if keyed {
			k := newKeyed(t, 1, time.Second)
			require.NoError(t, k.Wait(context.Background(), "api.test"))
			tr, err = httpthrottle.NewKeyedTransport(k, httpthrottle.KeyByHost, opts...)
		} else {
			b := newBucket(t, 1, time.Second, nil)
			require.NoError(t, b.Wait(context.Background()))
			tr, err = httpthrottle.NewTransport(b, opts...)
		}
		require.NoError(t, err)
		var wg sync.WaitGroup
		for _, q := range reqs {
			wg.Go(func() {
				ctx := context.Background()
				if q.ctxTenant != "" {
					ctx = rxthrottle.WithTenant(ctx, q.ctxTenant, 1)
				}
				req := mustRequest(t, ctx, "GET", nil)
				req.Header.Set("X-User", q.user)
				if q.weight != "" {
					req.Header.Set("X-Weight", q.weight)
				}
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				resp.Body.Close()
			})
			synctest.Wait()
		}
		wg.Wait()
	})
	return sent
}

// times returns n requests of user with weight and the context's tenant.
func times(n int, r tenantRequest) []tenantRequest {
	out := make([]tenantRequest, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// seconds returns the durations of whole seconds s.
func seconds(s ...int) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v) * time.Second
	}
	return out
}

// WithTenantFunc names each request's tenant from the request (SPEC.md,
// "Fair shares"): B's requests, sent after A's, share the quota with
// them; weights share it in proportion; its tenant replaces the
// context's; without it the same requests go first come, first served.
// (Without the option's code the first four cases fail.)
func TestTransportTenantFunc(t *testing.T) {
	a4b2 := append(times(4, tenantRequest{user: "A"}), times(2, tenantRequest{user: "B"})...)
	withFunc := httpthrottle.WithTenantFunc(byUserHeader)
	for _, c := range []struct {
		name  string
		keyed bool
		reqs  []tenantRequest
		opts  []httpthrottle.TransportOption
		want  map[string][]time.Duration
	}{
		{"equal weights", false, a4b2, []httpthrottle.TransportOption{withFunc},
			map[string][]time.Duration{"A": seconds(1, 3, 5, 6), "B": seconds(2, 4)}},
		{"a keyed Transport, within a key", true, a4b2, []httpthrottle.TransportOption{withFunc},
			map[string][]time.Duration{"A": seconds(1, 3, 5, 6), "B": seconds(2, 4)}},
		{"weights 1 and 2", false,
			append(times(6, tenantRequest{user: "A"}), times(4, tenantRequest{user: "B", weight: "2"})...),
			[]httpthrottle.TransportOption{withFunc},
			map[string][]time.Duration{"A": seconds(2, 5, 7, 8, 9, 10), "B": seconds(1, 3, 4, 6)}},
		{"the function's tenant replaces the context's", false,
			append(times(4, tenantRequest{user: "A"}), times(2, tenantRequest{user: "A", ctxTenant: "B"})...),
			[]httpthrottle.TransportOption{withFunc},
			map[string][]time.Duration{"A": seconds(1, 2, 3, 4), "A/B": seconds(5, 6)}},
		{"a function that defers to the context", false,
			append(times(4, tenantRequest{user: "A", ctxTenant: "A"}), times(2, tenantRequest{user: "B", ctxTenant: "B"})...),
			[]httpthrottle.TransportOption{httpthrottle.WithTenantFunc(func(r *http.Request) (string, float64) {
				return rxthrottle.TenantFrom(r.Context())
			})},
			map[string][]time.Duration{"A": seconds(1, 3, 5, 6), "B": seconds(2, 4)}},
		{"without the option, first come, first served", false, a4b2, nil,
			map[string][]time.Duration{"A": seconds(1, 2, 3, 4), "B": seconds(5, 6)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, tenantSchedule(t, c.keyed, c.reqs, c.opts...))
		})
	}
}
