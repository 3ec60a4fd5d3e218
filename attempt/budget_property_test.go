package attempt_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rxthrottle/rxthrottle/attempt"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// TestBudgetPropertyEveryWindow (SPEC.md, "Retry budget"), on virtual
// time: four callers count first attempts and retries at random instants
// (several at one instant, often) against a random budget and window. In
// the end no window [s, s+W) of the admissions holds more retries than
// ratio x its first attempts + min; and each retry is taken exactly when
// the rule admits it from the admissions before it (specmodel), so a
// refusal is never more than the rule needs.
func TestBudgetPropertyEveryWindow(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 27))
	spec := attempt.RetryBudget{
		Ratio: []float64{0, 0.1, 0.25, 0.5, 1, 2}[rng.IntN(6)],
		Min:   rng.IntN(4),
	}
	w := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond}[rng.IntN(3)]
	pRetry := 0.1 + 0.6*rng.Float64()
	t.Logf("seed %d: budget %v x + %d, window %v, %.0f%% retries asked", seed, spec.Ratio, spec.Min, w, 100*pRetry)
	synctest.Test(t, func(t *testing.T) {
		b, err := attempt.NewBudget(spec, func() time.Duration { return w })
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		type count struct {
			specmodel.BudgetEvent
			taken bool
		}
		var mu sync.Mutex
		var log []count
		var wg sync.WaitGroup
		for g := range 4 {
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			wg.Go(func() {
				for range 150 {
					if r.IntN(3) > 0 {
						time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
					}
					mu.Lock()
					e := count{BudgetEvent: specmodel.BudgetEvent{At: time.Since(start), Retry: r.Float64() < pRetry}, taken: true}
					if e.Retry {
						e.taken = b.Retry(time.Now())
					} else {
						b.First(time.Now())
					}
					log = append(log, e)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		var counted []specmodel.BudgetEvent
		taken, refused := 0, 0
		for _, e := range log {
			if e.Retry {
				if want := specmodel.BudgetAdmits(counted, e.At, w, spec.Ratio, spec.Min); e.taken != want {
					t.Fatalf("retry at %v: taken %v, the rule says %v", e.At, e.taken, want)
				}
				if !e.taken {
					refused++
					continue
				}
				taken++
			}
			counted = append(counted, e.BudgetEvent)
		}
		if err := specmodel.BudgetWindows(counted, w, spec.Ratio, spec.Min); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d retries taken, %d refused, of %d counts", taken, refused, len(log))
	})
}
