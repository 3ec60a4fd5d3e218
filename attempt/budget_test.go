package attempt_test

import (
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// budgetStep is one count of a step table: a first attempt, or a retry
// and whether the budget takes it.
type budgetStep struct {
	first bool
	at    int // ms
	want  bool
}

// runBudgetSteps runs steps against a Budget of spec over a window of 1 s.
func runBudgetSteps(t *testing.T, spec attempt.RetryBudget, steps []budgetStep) {
	t.Helper()
	b, err := attempt.NewBudget(spec, func() time.Duration { return time.Second })
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	for i, s := range steps {
		at := t0.Add(time.Duration(s.at) * time.Millisecond)
		if s.first {
			b.First(at)
			continue
		}
		if got := b.Retry(at); got != s.want {
			t.Errorf("step %d: Retry(%dms) = %v, want %v", i, s.at, got, s.want)
		}
	}
}

// The rule at a retry at t (SPEC.md, "Retry budget"): every window that
// holds t keeps R <= 0.5 F + 1 with it, counting what came up to t.
func TestBudgetSteps(t *testing.T) {
	runBudgetSteps(t, attempt.RetryBudget{Ratio: 0.5, Min: 1}, []budgetStep{
		{true, 0, true},
		{true, 0, true},
		{false, 0, true},    // [0, 1s): 1 <= 0.5*2 + 1
		{false, 0, true},    // 2 <= 2
		{false, 0, false},   // 3 > 2: not recorded
		{false, 100, false}, // [0, 1s) would hold 3 retries
		{true, 500, true},
		{true, 500, true},
		{false, 500, true},   // [500ms, 1.5s): 1 <= 2; [0, 1s): 3 <= 0.5*4 + 1
		{false, 600, false},  // [0, 1s): 4 > 3
		{false, 1000, true},  // 0 is out of every window holding 1s; [500ms, 1.5s): 2 <= 2
		{false, 1000, false}, // [1s, 2s): 2 > 0.5*0 + 1
	})
	// The windows up to each retry are not all: ten first attempts at 0
	// allow a retry at 900 ms in (-100ms, 900ms], but [900ms, 1.9s) may
	// get no first attempt, and with a minimum of 0 holds no retry.
	runBudgetSteps(t, attempt.RetryBudget{Ratio: 0.1, Min: 0}, []budgetStep{
		{true, 0, true}, {true, 0, true}, {true, 0, true}, {true, 0, true}, {true, 0, true},
		{true, 0, true}, {true, 0, true}, {true, 0, true}, {true, 0, true}, {true, 0, true},
		{false, 900, false},
		{false, 0, false}, // read late: counted at 900 ms, not at 0
	})
	var nilBudget *attempt.Budget
	nilBudget.First(time.Unix(0, 0))
	if !nilBudget.Retry(time.Unix(0, 0)) {
		t.Error("a nil Budget refused a retry")
	}
}

func TestBudgetInvalid(t *testing.T) {
	for _, spec := range []attempt.RetryBudget{{Ratio: -0.1}, {Min: -1}} {
		if _, err := attempt.NewBudget(spec, func() time.Duration { return time.Second }); err == nil {
			t.Errorf("NewBudget(%+v) accepted", spec)
		}
	}
	if _, err := attempt.BudgetFor(new(int), attempt.RetryBudget{Min: -1}, func() time.Duration { return time.Second }); err == nil {
		t.Error("BudgetFor accepted a negative Min")
	}
	if _, err := attempt.NewBudget(attempt.RetryBudget{Min: 1}, nil); err == nil {
		t.Error("NewBudget accepted a nil window")
	}
	if _, err := attempt.BudgetFor(new(int), attempt.RetryBudget{Min: 1}, nil); err == nil {
		t.Error("BudgetFor accepted a nil window")
	}
}

// A window of 0 (a limiter that reports no limits) counts each instant
// apart: Min retries at one instant, Min more at the next.
func TestBudgetZeroWindow(t *testing.T) {
	b, err := attempt.NewBudget(attempt.RetryBudget{Min: 1}, func() time.Duration { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	for i, want := range []bool{true, false} {
		if got := b.Retry(t0); got != want {
			t.Errorf("retry %d at one instant = %v, want %v", i, got, want)
		}
	}
	if !b.Retry(t0.Add(time.Nanosecond)) {
		t.Error("a retry at the next instant was refused by a window of 0")
	}
}
