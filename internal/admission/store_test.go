package admission

import (
	"errors"
	"slices"
	"testing"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// TestFrontCost: Cost is the tokens of the callers still waiting,
// whichever way each leaves (granted at the head, served out of turn,
// cancelled, failed, requeued and granted again).
func TestFrontCost(t *testing.T) {
	var f Front
	p := &planner{change: Never}
	if f.Cost() != 0 {
		t.Fatalf("an empty front: Cost %d", f.Cost())
	}
	w := func(n int, tenant string) *Waiter {
		x := NewWaiter(0, n, 0, fairq.Caller{Tenant: tenant, Weight: 1})
		f.Push(x)
		return x
	}
	a, b, c, d := w(1, "a"), w(2, "b"), w(3, "a"), w(4, "b")
	if f.Cost() != 10 {
		t.Fatalf("four waiting: Cost %d, want 10", f.Cost())
	}
	p.free = []int64{0} // one token: a, the head, goes
	f.Dispatch(p, 0)
	if a.State != Granted || f.Cost() != 9 {
		t.Fatalf("a granted: state %d, Cost %d, want 9", a.State, f.Cost())
	}
	f.Requeue(a)
	if f.Cost() != 10 {
		t.Fatalf("a requeued: Cost %d, want 10", f.Cost())
	}
	f.Serve(p, c)
	f.Cancel(p, b)
	if f.Cost() != 5 {
		t.Fatalf("c served, b cancelled: Cost %d, want 5", f.Cost())
	}
	f.Fail(p, d, errors.New("late"))
	p.free = []int64{0}
	f.Dispatch(p, 0) // the requeued a, first
	if f.Cost() != 0 || f.Waiting() != 0 || a.State != Granted {
		t.Errorf("all gone: Cost %d, waiting %d, a %d", f.Cost(), f.Waiting(), a.State)
	}
}

// TestFrontFail: a waiter failed where it stands (behind the head) leaves
// with its error, told at once (Ready, Notify), counted once (Left); the
// order of the others is as if it had never arrived.
func TestFrontFail(t *testing.T) {
	var f Front
	p := &planner{change: Never}
	a := NewWaiter(0, 1, 0, fairq.Caller{Tenant: "a", Weight: 1})
	b := NewWaiter(0, 1, 0, fairq.Caller{Tenant: "b", Weight: 1})
	c := NewWaiter(0, 1, 0, fairq.Caller{Tenant: "b", Weight: 1})
	told := 0
	b.Notify = func() { told++ }
	f.Push(a)
	f.Push(b)
	f.Push(c)
	late := errors.New("late")
	f.Fail(p, b, late)
	select {
	case <-b.Ready:
	default:
		t.Fatal("b failed, not told")
	}
	if b.State != Failed || b.Err != late || told != 1 || p.left != 1 {
		t.Fatalf("b failed: state %d, err %v, notified %d, left %d", b.State, b.Err, told, p.left)
	}
	// c is b's tenant's first now, as if b had never come: a, then c.
	if got := f.All(); !slices.Equal(got, []*Waiter{a, c}) || f.Waiting() != 2 {
		t.Errorf("after Fail(b), All = %v, waiting %d, want a c", names(got), f.Waiting())
	}
	select {
	case <-a.Ready:
		t.Error("a told, not failed")
	default:
	}
}
