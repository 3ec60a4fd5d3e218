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
)

// WithRetryBudget (SPEC.md, "Retry budget"): fn refuses every call with
// RetryAfter(0); up to 10 attempts an item, a budget of 10% plus 2. At each
// retry, the retries in the window of W up to it are at most 0.1 times
// the first calls in it plus 2; each item ends with its last refusal.
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
		for i, c := range calls {
			if !c.retry {
				continue
			}
			retries++
			f, r := 0, 0
			for _, d := range calls[:i+1] {
				if d.at > c.at-w {
					if d.retry {
						r++
					} else {
						f++
					}
				}
			}
			require.LessOrEqualf(t, float64(r), ratio*float64(f)+min, "at %v: %d retries, %d first calls in the window up to it", c.at, r, f)
		}
		assert.Positive(t, retries)
		assert.Less(t, retries, len(items), "the budget stopped most retries")
	})
}
