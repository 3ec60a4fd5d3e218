package fairq

import "testing"

// TestRemoveNewestKeepsNothing: withdrawing a tenant's newest caller (as
// an estimate's probe is, pushed and removed at once) leaves nothing
// behind to skip later, however often it is done while an older caller of
// the tenant waits.
func TestRemoveNewestKeepsNothing(t *testing.T) {
	var q Queue[int]
	head := &Item[int]{Value: 1}
	q.Push(head, Caller{})
	for range 1000 {
		probe := &Item[int]{Value: 2}
		q.Push(probe, Caller{})
		q.Remove(probe)
	}
	if n := len(q.lanes[0].tenants[""].items); n != 1 {
		t.Fatalf("the tenant keeps %d items, want 1", n)
	}
	if q.Len() != 1 || q.Peek() != head {
		t.Fatalf("Len %d, Peek %v: want the head alone", q.Len(), q.Peek())
	}
	q.Pop()
	if q.Len() != 0 || q.Peek() != nil {
		t.Fatal("not empty after the head went")
	}
}
