package admission

import (
	"slices"
	"testing"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// names returns the tenants of ws, which name the waiters of these tests.
func names(ws []*Waiter) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Who.Tenant
	}
	return out
}

// TestRequeue: a waiter granted and given back its place waits again
// first of its priority: ahead of the fair queue's waiters of its
// priority (whatever their tenant's share), behind those of a higher
// priority and those of its priority requeued before it; Leads, Ahead,
// and Next see it there.
func TestRequeue(t *testing.T) {
	var f Front
	p := &planner{free: []int64{0}, change: Never}
	w := func(prio int, name string) *Waiter {
		return NewWaiter(0, 1, 0, fairq.Caller{Prio: prio, Tenant: name})
	}
	a, b := w(0, "a"), w(0, "b")
	f.Push(a)
	f.Dispatch(p, 0)
	if a.State != Granted {
		t.Fatalf("a: state %d, want granted", a.State)
	}
	ready := a.Ready
	hi, low, b2 := w(1, "hi"), w(-1, "low"), w(0, "b2")
	for _, x := range []*Waiter{b, hi, low, b2} {
		f.Push(x)
	}
	f.Requeue(a)
	if a.State != Waiting || a.Ready == ready || f.Waiting() != 5 {
		t.Fatalf("requeued: state %d, same Ready %v, waiting %d", a.State, a.Ready == ready, f.Waiting())
	}
	c := w(0, "c") // a tenant with no share spent: it would lead its priority's fair queue
	if f.leads(c.Who) {
		t.Error("a caller of a's priority leads a requeued a")
	}
	if !f.leads(w(2, "top").Who) {
		t.Error("a caller of a higher priority does not lead")
	}
	if got, want := names(f.Ahead(b2)), []string{"hi", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("Ahead(b2) = %v, want %v", got, want)
	}
	if got, want := names(f.Ahead(a)), []string{"hi"}; !slices.Equal(got, want) {
		t.Errorf("Ahead(a) = %v, want %v", got, want)
	}
	if got := f.Next(); got != hi {
		t.Errorf("Next() = %v, want hi", got.Who.Tenant)
	}
	// Granted in turn, one token at a time: hi, a, b, b2, low.
	var order []*Waiter
	for f.Waiting() > 0 {
		p.free = []int64{0}
		f.Dispatch(p, 0)
		order = append(order, p.granted[len(p.granted)-1])
	}
	if got, want := names(order), []string{"hi", "a", "b", "b2", "low"}; !slices.Equal(got, want) {
		t.Errorf("granted %v, want %v", got, want)
	}
}

// TestRequeueTwice: two waiters requeued of one priority go in the order
// they were requeued, and one cancelled leaves the others in place.
func TestRequeueTwice(t *testing.T) {
	var f Front
	p := &planner{change: Never}
	x, y, z, q := NewWaiter(0, 1, 0, fairq.Caller{Tenant: "x"}), NewWaiter(0, 1, 0, fairq.Caller{Tenant: "y"}),
		NewWaiter(0, 1, 0, fairq.Caller{Tenant: "z"}), NewWaiter(0, 1, 0, fairq.Caller{Tenant: "q", Prio: 3})
	f.Push(z)
	f.Requeue(x)
	f.Requeue(y)
	f.Requeue(q)
	if got, want := names(f.Ahead(z)), []string{"q", "x", "y"}; !slices.Equal(got, want) {
		t.Errorf("Ahead(z) = %v, want %v", got, want)
	}
	f.Cancel(p, x)
	if x.State != Cancelled || f.Waiting() != 3 {
		t.Fatalf("x: state %d, waiting %d", x.State, f.Waiting())
	}
	if got, want := names(f.Ahead(z)), []string{"q", "y"}; !slices.Equal(got, want) {
		t.Errorf("after Cancel(x), Ahead(z) = %v, want %v", got, want)
	}
	p.free = []int64{0, 0, 0}
	f.Dispatch(p, 0)
	if got, want := names(p.granted), []string{"q", "y", "z"}; !slices.Equal(got, want) {
		t.Errorf("granted %v, want %v", got, want)
	}
}
