package attempt_test

import (
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle/attempt"
)

func TestBudgetSteps(t *testing.T) {
	b, err := attempt.NewBudget(attempt.RetryBudget{Ratio: 0.5, Min: 1}, func() time.Duration { return time.Second })
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	steps := []struct {
		first bool
		at    int // ms
		want  bool
	}{
		{true, 0, true},
		{true, 0, true},
		{false, 100, true},   // 1 <= 0.5*2 + 1
		{false, 200, true},   // 2 <= 2
		{false, 300, false},  // 3 > 2: not recorded
		{false, 1150, false}, // the firsts at 0 left the window; 0.2's retry is in it: 2 > 1
		{false, 1250, true},  // no retry left in (0.25, 1.25]: 1 <= 1
		{true, 1300, true},
		{true, 1300, true},
		{false, 1400, true},  // 2 <= 0.5*2 + 1
		{false, 1500, false}, // 3 > 2
	}
	for i, s := range steps {
		if s.first {
			b.First(ms(s.at))
			continue
		}
		if got := b.Retry(ms(s.at)); got != s.want {
			t.Errorf("step %d: Retry(%dms) = %v, want %v", i, s.at, got, s.want)
		}
	}
	var nilBudget *attempt.Budget
	nilBudget.First(t0)
	if !nilBudget.Retry(t0) {
		t.Error("a nil Budget refused a retry")
	}
}

func TestBudgetInvalid(t *testing.T) {
	for _, spec := range []attempt.RetryBudget{{Ratio: -0.1}, {Min: -1}} {
		if _, err := attempt.NewBudget(spec, func() time.Duration { return time.Second }); err == nil {
			t.Errorf("NewBudget(%+v) accepted", spec)
		}
	}
	w := func() time.Duration { return time.Second }
	l1, l2 := new(int), new(int)
	spec := attempt.RetryBudget{Ratio: 0.1, Min: 1}
	a, _ := attempt.BudgetFor(l1, spec, w)
	b, _ := attempt.BudgetFor(l1, spec, w)
	c, _ := attempt.BudgetFor(l2, spec, w)
	if a != b || a == c {
		t.Error("BudgetFor: one Budget per limiter and spec")
	}
}
