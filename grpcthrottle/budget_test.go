package grpcthrottle_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// callKey names a call in its context, across its attempts.
type callKey struct{}

// WithRetryBudget on the unary interceptor: every RPC is refused with
// RESOURCE_EXHAUSTED, up to 5 attempts each. Without a budget each makes
// 5; with a budget of 0 plus 0 none is retried, each returning its
// refusal; with 10% plus 2, some are, and no window of the arrivals holds
// more than 10% of its first attempts plus 2 retries.
func TestVirtualRetryBudget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []grpcthrottle.Option
		retries func(n uint64) bool
		ratio   float64 // the budget, checked in every window
		min     int
	}{
		{"no budget", nil, func(n uint64) bool { return n == 4*10 }, 0, 0},
		{"0 plus 0", []grpcthrottle.Option{grpcthrottle.WithRetryBudget(0, 0)}, func(n uint64) bool { return n == 0 }, 0, 0},
		{"10% plus 2", []grpcthrottle.Option{grpcthrottle.WithRetryBudget(0.1, 2)}, func(n uint64) bool { return n > 0 && n < 4*10 }, 0.1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]grpcthrottle.Option{grpcthrottle.WithMaxAttempts(5)}, tc.opts...)
				var mu sync.Mutex
				var arrivals []specmodel.BudgetEvent
				seen := map[any]bool{}
				start := time.Now()
				_, errs, it := runUnary(t, rxthrottle.Per(10, time.Second), nil, opts, 10, func(int) wire {
					return wire{write: true, answer: true, err: status.Error(codes.ResourceExhausted, "slow down")}
				}, func(n int) context.Context {
					return context.WithValue(context.Background(), callKey{}, n)
				}, func(ctx context.Context) {
					mu.Lock()
					defer mu.Unlock()
					call := ctx.Value(callKey{})
					arrivals = append(arrivals, specmodel.BudgetEvent{At: time.Since(start), Retry: seen[call]})
					seen[call] = true
				})
				if tc.opts != nil {
					assert.NoError(t, specmodel.BudgetWindows(arrivals, time.Second, tc.ratio, tc.min), "every window of the arrivals")
				}
				for _, err := range errs {
					assert.Equal(t, codes.ResourceExhausted, status.Code(err), "the refusal comes back")
				}
				st := it.Stats()
				assert.True(t, tc.retries(st.Retries), "%d retries", st.Retries)
				assert.Equal(t, 10+st.Retries, st.Sent)
				if tc.opts != nil {
					assert.Positive(t, st.RetriesOverBudget)
				}
			})
		})
	}
}
