package httpthrottle_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/internal/limitererr/limitererrtest"
)

// ctxLimiter is a Limiter whose Wait and Acquire end as take says, with the
// caller's context and its cancel.
type ctxLimiter struct {
	failingLimiter
	take func(ctx context.Context, cancel context.CancelFunc) error
	stop context.CancelFunc
}

func (l ctxLimiter) Wait(ctx context.Context) error { return l.take(ctx, l.stop) }
func (l ctxLimiter) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, l.take(ctx, l.stop)
}

// An attempt the limiter failed counts in Failed, apart from Cancelled:
// a store's outage, even one whose error wraps context.DeadlineExceeded
// while the caller's context is live, is not a caller that gave up. The
// limiter's refusals and a context that ended count in Cancelled, as
// before. With Acquire and with departure renewal (Wait).
func TestTransportStatsFailed(t *testing.T) {
	for _, tc := range limitererrtest.Cases() {
		for _, departure := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/departure=%v", tc.Name, departure), func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					t.Error("the request was sent")
					return respond(r, http.StatusOK, nil), nil
				})
				opts := []httpthrottle.TransportOption{httpthrottle.WithBase(base)}
				if departure {
					opts = append(opts, httpthrottle.WithDepartureRenewal())
				}
				tr, err := httpthrottle.NewTransport(ctxLimiter{take: tc.Take, stop: cancel}, opts...)
				require.NoError(t, err)
				_, err = tr.RoundTrip(mustRequest(t, ctx, http.MethodGet, nil))
				require.Error(t, err)
				s := tr.Stats()
				failed := uint64(0)
				if tc.Failed {
					failed = 1
				}
				assert.Equal(t, failed, s.Failed, "Failed")
				assert.Equal(t, 1-failed, s.Cancelled, "Cancelled")
				assert.Zero(t, s.Sent, "Sent")
				figures := map[string]float64{}
				for _, f := range s.Figures() {
					figures[f.Name] = f.Value
				}
				assert.Equal(t, float64(failed), figures["transport.failed"])
			})
		}
	}
}
