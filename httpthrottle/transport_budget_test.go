package httpthrottle_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// budgetArrival is an attempt at the server: when, and whether it retried
// a call.
type budgetArrival struct {
	at    time.Duration
	retry bool
}

// checkBudget fails unless every window [s, s+w) of the arrivals holds at
// most ratio times its first attempts plus min retries (SPEC.md, "Retry
// budget").
func checkBudget(t *testing.T, log []budgetArrival, w time.Duration, ratio float64, min int) (firsts, retries int) {
	t.Helper()
	events := make([]specmodel.BudgetEvent, len(log))
	for i, a := range log {
		events[i] = specmodel.BudgetEvent{At: a.at, Retry: a.retry}
		if a.retry {
			retries++
		} else {
			firsts++
		}
	}
	if err := specmodel.BudgetWindows(events, w, ratio, min); err != nil {
		t.Fatal(err)
	}
	return firsts, retries
}

// Issue 27, item 5: a server that refuses everything with 429, 8 workers
// each sending calls of up to 10 attempts through one Transport with a
// retry budget of 10% plus 2: retries stay within the budget in every
// window, and the ones over it are not sent.
func TestTransportRetryBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ratio, min = 0.1, 2
		var mu sync.Mutex
		var log []budgetArrival
		seen := map[string]bool{}
		start := time.Now()
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			call := r.URL.Query().Get("call")
			log = append(log, budgetArrival{time.Since(start), seen[call]})
			seen[call] = true
			mu.Unlock()
			return respond(r, http.StatusTooManyRequests, nil), nil
		})
		b, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
		require.NoError(t, err)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(10),
			httpthrottle.WithRetryBudget(ratio, min), httpthrottle.OnHeaderError(nil))
		require.NoError(t, err)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for c := range 20 {
					req := mustRequest(t, context.Background(), "GET", nil)
					req.URL.RawQuery = fmt.Sprintf("call=%d-%d", w, c)
					resp, err := tr.RoundTrip(req)
					require.NoError(t, err)
					assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "over the budget, the refusal comes back")
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		firsts, retries := checkBudget(t, log, time.Second, ratio, min)
		st := tr.Stats()
		t.Logf("%d first attempts, %d retries, %d over the budget", firsts, retries, st.RetriesOverBudget)
		assert.Equal(t, 160, firsts)
		assert.Positive(t, retries)
		assert.Positive(t, st.RetriesOverBudget)
		assert.Equal(t, uint64(retries), st.Retries)
	})
}
