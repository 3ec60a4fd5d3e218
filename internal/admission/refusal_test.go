package admission

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Every refusal names its limiter and operation, says why with the
// figures that decided it, and wraps its sentinel (a deadline refusal
// also context.DeadlineExceeded); Cost is nil exactly for 1 <= n <= minN.
func TestRefusals(t *testing.T) {
	r := Refusals{Limiter: "store", Waiting: "callers of this process"}
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		err  error
		is   []error
		want string
	}{
		{"queue full", r.QueueFull("Wait", 3), []error{ErrQueueFull},
			"store: Wait: 3 callers of this process wait already, the bound of WithMaxQueue: queue full"},
		{"deadline, left known", r.Deadline("Acquire", 2*ms, 5*ms), []error{ErrDeadline, context.DeadlineExceeded},
			"store: Acquire: the context's deadline is in 2ms, and the earliest departure in 5ms"},
		{"deadline, left unknown", r.Deadline("WaitN", -1, 5*ms), []error{ErrDeadline, context.DeadlineExceeded},
			"store: WaitN: the context's deadline comes before the earliest departure, 5ms after the arrival"},
		{"cost 0", r.Cost("WaitN", 0, 4), []error{ErrInvalidCost}, "store: WaitN(n=0): n must be from 1 to the smallest N of the limits, 4"},
		{"cost above N", r.Cost("AllowN", 5, 4), []error{ErrInvalidCost}, "store: AllowN(n=5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error")
			}
			for _, target := range tc.is {
				if !errors.Is(tc.err, target) {
					t.Errorf("errors.Is(%q, %v) = false", tc.err, target)
				}
			}
			if !strings.HasPrefix(tc.err.Error(), tc.want) {
				t.Errorf("error %q, want it to start with %q", tc.err, tc.want)
			}
		})
	}
	for _, n := range []int{1, 2, 4} {
		if err := r.Cost("WaitN", n, 4); err != nil {
			t.Errorf("Cost(n=%d, minN=4) = %v, want nil", n, err)
		}
	}
	if err := r.Cost("WaitN", -1, 4); !errors.Is(err, ErrInvalidCost) {
		t.Errorf("Cost(n=-1) = %v, want ErrInvalidCost", err)
	}
}
