package admission

import (
	"slices"
	"sync"
	"testing"
)

// TestCalls: calls queued under the lock run after it is released, in
// order, none for a nil hook, and Take hands them over instead.
func TestCalls(t *testing.T) {
	var (
		mu  sync.Mutex
		c   Calls[int]
		got []int
	)
	f := func(v int) {
		if !mu.TryLock() {
			t.Errorf("call %d ran with the lock held", v)
			return
		}
		mu.Unlock()
		got = append(got, v)
	}
	run := func(call Call[int]) { call.F(call.Ev) }
	mu.Lock()
	c.Add(nil, 0)
	if !c.None() {
		t.Fatal("a nil hook made the list")
	}
	c.Unlock(&mu, run)
	for i, step := range [][]int{{1}, {2, 3, 4}, {}, {5}} {
		got = nil
		mu.Lock()
		for _, v := range step {
			c.Add(f, v)
		}
		c.Unlock(&mu, run)
		if !slices.Equal(got, step) && len(step)+len(got) > 0 {
			t.Errorf("step %d: ran %v, want %v", i, got, step)
		}
	}
	mu.Lock()
	c.Add(f, 6)
	c.Add(f, 7)
	taken := c.Take()
	mu.Unlock()
	if len(taken) != 2 || taken[0].Ev != 6 || taken[1].Ev != 7 || c.Take() != nil {
		t.Errorf("Take = %v, then %v", taken, c.Take())
	}
}
