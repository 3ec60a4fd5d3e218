package admission

import (
	"slices"
	"testing"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// TestQueueServe: a waiter served out of turn (a store's departure that
// comes before an earlier one's) takes its tenant's first place and is
// charged as its tenant's next, so the tenant's other waiter goes after
// the other tenant's; All shows the order, requeued waiters first of
// their priority, and FIFO holds only for one tenant, one priority and
// nobody requeued.
func TestQueueServe(t *testing.T) {
	var q Queue
	w := func(tenant string) *Waiter {
		return NewWaiter(0, 1, 0, fairq.Caller{Tenant: tenant, Weight: 1})
	}
	a1, a2 := w("a"), w("a")
	q.Push(a1)
	q.Push(a2)
	if !q.FIFO() {
		t.Error("one tenant, one priority: not FIFO")
	}
	b1 := w("b")
	q.Push(b1)
	if q.FIFO() {
		t.Error("two tenants: FIFO")
	}
	if got := q.All(); !slices.Equal(got, []*Waiter{a1, b1, a2}) {
		t.Fatalf("All = %v, want a1 b1 a2", names(got))
	}
	q.Serve(a2)
	if a2.State != Granted || q.Live() != 2 {
		t.Fatalf("a2 served: state %d, live %d", a2.State, q.Live())
	}
	// a2 was charged as a's first: a1 now finishes where a2 would have.
	if got := q.All(); !slices.Equal(got, []*Waiter{b1, a1}) {
		t.Errorf("after Serve(a2), All = %v, want b1 a", names(got))
	}
	r := w("r")
	q.Requeue(r)
	if q.FIFO() {
		t.Error("a waiter requeued: FIFO")
	}
	if got := q.All(); !slices.Equal(got, []*Waiter{r, b1, a1}) {
		t.Errorf("with r requeued, All = %v, want r b1 a", names(got))
	}
	q.Serve(r)
	if r.State != Granted || q.Live() != 2 || !slices.Equal(q.All(), []*Waiter{b1, a1}) {
		t.Errorf("r served: state %d, live %d, All %v", r.State, q.Live(), names(q.All()))
	}
}

// TestFrontServe: the front serves a waiter out of turn through its
// queue and counts it leaving once (p.Left), as Cancel does; All and FIFO
// show the queue's order, and an empty front is FIFO with nobody in it.
func TestFrontServe(t *testing.T) {
	var f Front
	p := &planner{change: Never}
	if !f.FIFO() || f.All() != nil {
		t.Fatal("an empty front: not FIFO, or waiters in it")
	}
	a1 := NewWaiter(0, 1, 0, fairq.Caller{Tenant: "a", Weight: 1})
	a2 := NewWaiter(0, 1, 0, fairq.Caller{Tenant: "a", Weight: 1})
	f.Push(a1)
	f.Push(a2)
	if !f.FIFO() || !slices.Equal(f.All(), []*Waiter{a1, a2}) {
		t.Fatalf("one tenant: FIFO %v, All %v", f.FIFO(), names(f.All()))
	}
	b1 := NewWaiter(0, 1, 0, fairq.Caller{Tenant: "b", Weight: 1})
	f.Push(b1)
	if f.FIFO() || !slices.Equal(f.All(), []*Waiter{a1, b1, a2}) {
		t.Fatalf("two tenants: FIFO %v, All %v", f.FIFO(), names(f.All()))
	}
	f.Serve(p, a2)
	if a2.State != Granted || f.Waiting() != 2 || p.left != 1 {
		t.Fatalf("a2 served: state %d, waiting %d, left %d", a2.State, f.Waiting(), p.left)
	}
	f.Serve(p, b1)
	f.Cancel(p, a1)
	if f.Waiting() != 0 || p.left != 3 || a1.State != Cancelled {
		t.Errorf("all gone: waiting %d, left %d, a1 %d", f.Waiting(), p.left, a1.State)
	}
}
