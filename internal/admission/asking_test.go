package admission

import (
	"slices"
	"sync"
	"testing"
)

// TestDecideAsk: the verdicts at the arrival of a caller at an Asking
// front, step by step: behind callers known to wait it waits, or the
// bound refuses it; else it asks, at the bound only to go at once; a
// caller counted already (it waited elsewhere first) is not one of the
// others the bound counts.
func TestDecideAsk(t *testing.T) {
	for i, s := range []struct {
		others  int  // callers counted waiting, the arrival not among them
		counted bool // the arrival counts waiting already
		behind  bool
		bound   int
		want    Verdict
	}{
		{bound: -1, want: Ask},
		{behind: true, bound: -1, want: Wait},
		{others: 5, bound: -1, want: Ask},
		{bound: 0, want: AskAtOnce}, // a bound refuses only who would wait
		{behind: true, bound: 0, want: Full},
		{others: 1, bound: 1, want: AskAtOnce},
		{others: 1, behind: true, bound: 1, want: Full},
		{others: 1, behind: true, bound: 2, want: Wait},
		{counted: true, behind: true, bound: 1, want: Wait}, // itself is not one of the others
		{others: 1, counted: true, behind: true, bound: 1, want: Full},
		{counted: true, bound: 1, want: Ask},
	} {
		var f Asking[int]
		for range s.others {
			f.Wait(new(Asker[int]), nil, 0)
		}
		var c Asker[int]
		if s.counted {
			f.Wait(&c, nil, 0)
		}
		if got := f.DecideAsk(&c, s.behind, s.bound); got != s.want {
			t.Errorf("step %d: DecideAsk = %d, want %d", i, got, s.want)
		}
	}
}

// TestAskingCounts: a caller is counted once however often it learns it
// waits, its OnWait is queued then only and made once the lock is
// released, by Unlock; Leave uncounts it once.
func TestAskingCounts(t *testing.T) {
	var (
		mu  sync.Mutex
		f   Asking[int]
		a   Asker[int]
		b   Asker[int]
		got []int
	)
	hook := func(v int) {
		if !mu.TryLock() {
			t.Errorf("OnWait %d ran with the lock held", v)
			return
		}
		mu.Unlock()
		got = append(got, v)
	}
	run := func(call Call[int]) { call.F(call.Ev) }
	mu.Lock()
	if !f.Wait(&a, hook, 1) || f.Wait(&a, hook, 10) {
		t.Fatal("a caller was counted twice, or not at all")
	}
	if got != nil {
		t.Fatal("OnWait ran under the lock")
	}
	a.Unlock(&mu, run)
	mu.Lock()
	f.Wait(&b, hook, 2)
	a.Unlock(&mu, run) // a's calls are made: b's are b's
	if !slices.Equal(got, []int{1}) {
		t.Fatalf("OnWait ran %v, want [1]", got)
	}
	mu.Lock()
	b.Unlock(&mu, run)
	if !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("OnWait ran %v, want [1 2]", got)
	}
	if f.Waiters() != 2 || !a.Waits() || !b.Waits() {
		t.Fatalf("Waiters = %d, want 2", f.Waiters())
	}
	if !f.Leave(&a) || f.Leave(&a) || f.Waiters() != 1 || a.Waits() {
		t.Fatalf("Leave: Waiters = %d, want 1, a uncounted once", f.Waiters())
	}
}
