package attempt

import (
	"testing"
	"time"
)

// A limiter that is not comparable (a value with a slice or a map in it,
// as a user's own Limiter may be) cannot key the registry: BudgetFor
// must not panic, and gives each adapter counts of its own.
func TestBudgetForUncomparableLimiter(t *testing.T) {
	type sliceLimiter struct{ parts []int }
	spec := RetryBudget{Ratio: 0, Min: 1}
	t0 := time.Unix(0, 0)
	l := sliceLimiter{parts: []int{1}}
	window := func() time.Duration { return time.Second }
	a, err := BudgetFor(l, spec, window)
	if err != nil {
		t.Fatal(err)
	}
	b, err := BudgetFor(l, spec, window)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Retry(t0) || !b.Retry(t0) {
		t.Error("an uncomparable limiter's adapters share counts they cannot be keyed by")
	}
	if a.Retry(t0) {
		t.Error("one Budget's own counts did not bind it")
	}
	type funcLimiter func()
	if _, err := BudgetFor(funcLimiter(func() {}), spec, window); err != nil {
		t.Fatal(err)
	}
}
