package rxthrottle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// WithRetryBudget (SPEC.md, "Retry budget"): fn refuses every call with
// RetryAfter(0); up to 10 attempts an item, a budget of 10% plus 2. Every
// window of W holds at most 0.1 times its first calls plus 2 retries; each
// item ends with its last refusal.
func TestThrottleMapRetryBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ratio, min, w = 0.1, 2, time.Second
		type call struct {
			at    time.Duration
			retry bool
		}
		var mu sync.Mutex
		var calls []call
		seen := map[any]bool{}
		start := time.Now()
		fn := func(_ context.Context, v any) (any, error) {
			mu.Lock()
			calls = append(calls, call{time.Since(start), seen[v]})
			seen[v] = true
			mu.Unlock()
			return nil, rxthrottle.RetryAfter(0, errors.New("429"))
		}
		items := make([]any, 60)
		for i := range items {
			items[i] = i
		}
		out := rxthrottle.ThrottleMap(rxthrottle.Per(10, w), fn, rxthrottle.WithMaxAttempts(10),
			rxthrottle.WithRetryBudget(ratio, min))(rxgo.Just(items...)())
		n := 0
		for item := range out.Observe() {
			var pe *rxthrottle.PushbackError
			require.ErrorAs(t, item.E, &pe)
			n++
		}
		assert.Equal(t, len(items), n)
		retries := 0
		events := make([]specmodel.BudgetEvent, len(calls))
		for i, c := range calls {
			events[i] = specmodel.BudgetEvent{At: c.at, Retry: c.retry}
			if c.retry {
				retries++
			}
		}
		require.NoError(t, specmodel.BudgetWindows(events, w, ratio, min))
		assert.Positive(t, retries)
		assert.Less(t, retries, len(items), "the budget stopped most retries")
	})
}

// noLimits is a Limiter that breaks its contract: Limits returns none.
type noLimits struct{ *rxthrottle.Bucket }

func (noLimits) Limits() []rxthrottle.Limit { return nil }

// A retry budget over a Limiter whose Limits returns none must not panic
// on the operator's goroutine (its window was Limits()[0]'s): the budget
// counts each instant apart, and the item retries once and goes.
func TestThrottleMapRetryBudgetOverLimiterWithoutLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
		require.NoError(t, err)
		var calls int
		fn := func(_ context.Context, v any) (any, error) {
			if calls++; calls == 1 {
				return nil, rxthrottle.RetryAfter(0, errors.New("429"))
			}
			return v, nil
		}
		out := rxthrottle.ThrottleMapWith(noLimits{b}, fn, rxthrottle.WithMaxAttempts(3),
			rxthrottle.WithRetryBudget(0, 1))(rxgo.Just(1)())
		for item := range out.Observe() {
			require.NoError(t, item.E)
			require.Equal(t, 1, item.V)
		}
		require.Equal(t, 2, calls)
	})
}
