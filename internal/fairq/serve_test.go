package fairq

import (
	"slices"
	"testing"
)

// TestAllIsPopOrder: All lists the callers in the order Pop serves them.
func TestAllIsPopOrder(t *testing.T) {
	var q Queue[string]
	push := func(v, tenant string, w float64, prio int) {
		q.Push(&Item[string]{Value: v}, Caller{Tenant: tenant, Weight: w, Prio: prio})
	}
	push("a1", "a", 1, 0)
	push("a2", "a", 1, 0)
	push("a3", "a", 1, 0)
	push("b1", "b", 2, 0)
	push("b2", "b", 2, 0)
	push("h", "c", 1, 1)
	push("c1", "c", 1, 0)
	all := q.All()
	var popped []string
	for q.Len() > 0 {
		popped = append(popped, q.Pop().Value)
	}
	if !slices.Equal(all, popped) {
		t.Fatalf("All %v, Pop order %v", all, popped)
	}
	if all[0] != "h" {
		t.Fatalf("All %v: the higher priority first", all)
	}
}

// TestServeOutOfOrder: serving a tenant's later caller before its head
// charges the tenant as if the head had been served, and leaves the head
// waiting with the later caller's place: the order of the rest is the
// one serving the head would give.
func TestServeOutOfOrder(t *testing.T) {
	build := func() (*Queue[string], map[string]*Item[string]) {
		q := new(Queue[string])
		items := map[string]*Item[string]{}
		for _, c := range []struct{ v, tenant string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}, {"a3", "a"}, {"b2", "b"}} {
			it := &Item[string]{Value: c.v}
			items[c.v] = it
			q.Push(it, Caller{Tenant: c.tenant})
		}
		return q, items
	}
	inOrder, _ := build()
	inOrder.Pop() // a1
	outOfOrder, items := build()
	outOfOrder.Serve(items["a2"])
	want := inOrder.All()
	want[slices.Index(want, "a2")] = "a1"
	if got := outOfOrder.All(); !slices.Equal(got, want) {
		t.Fatalf("after serving a2 first: %v, want %v", got, want)
	}
	outOfOrder.Serve(items["a1"])
	outOfOrder.Serve(items["b1"])
	if got := outOfOrder.All(); !slices.Equal(got, []string{"b2", "a3"}) && !slices.Equal(got, []string{"a3", "b2"}) {
		t.Fatalf("left %v", got)
	}
	for outOfOrder.Len() > 0 {
		outOfOrder.Pop()
	}
	if outOfOrder.Peek() != nil {
		t.Fatal("not empty")
	}
}

// TestServeHeadIsPop: serving the caller Peek returns is Pop.
func TestServeHeadIsPop(t *testing.T) {
	var a, b Queue[int]
	for i := range 6 {
		tenant := string(rune('a' + i%3))
		a.Push(&Item[int]{Value: i}, Caller{Tenant: tenant, Weight: float64(1 + i%2)})
		b.Push(&Item[int]{Value: i}, Caller{Tenant: tenant, Weight: float64(1 + i%2)})
	}
	for a.Len() > 0 {
		x, y := a.Pop().Value, b.Peek()
		b.Serve(y)
		if x != y.Value {
			t.Fatalf("Pop %d, Serve(Peek) %d", x, y.Value)
		}
		if !slices.Equal(a.All(), b.All()) {
			t.Fatalf("%v against %v", a.All(), b.All())
		}
	}
}

// TestFIFO: one priority and one tenant waiting is arrival order; a
// second tenant or priority is not.
func TestFIFO(t *testing.T) {
	var q Queue[int]
	if !q.FIFO() {
		t.Fatal("empty: FIFO")
	}
	a := &Item[int]{Value: 1}
	q.Push(a, Caller{Tenant: "a"})
	q.Push(&Item[int]{Value: 2}, Caller{Tenant: "a"})
	if !q.FIFO() {
		t.Fatal("one tenant: FIFO")
	}
	b := &Item[int]{Value: 3}
	q.Push(b, Caller{Tenant: "b"})
	if q.FIFO() {
		t.Fatal("two tenants: not FIFO")
	}
	q.Remove(b)
	h := &Item[int]{Value: 4}
	q.Push(h, Caller{Tenant: "a", Prio: 1})
	if q.FIFO() {
		t.Fatal("two priorities: not FIFO")
	}
	q.Remove(h)
	if !q.FIFO() {
		t.Fatal("one tenant again: FIFO")
	}
}

// TestFIFOFrom: FIFOFrom walks a FIFO queue in order from the first
// caller whose arrival number is at least the one given, skipping those
// withdrawn, after a caller served out of turn took an earlier number.
func TestFIFOFrom(t *testing.T) {
	var q Queue[string]
	items := map[string]*Item[string]{}
	for _, v := range []string{"a1", "a2", "a3", "a4", "a5", "a6"} {
		items[v] = &Item[string]{Value: v}
		q.Push(items[v], Caller{})
	}
	from := func(seq uint64) (out []string) {
		q.FIFOFrom(seq, func(it *Item[string]) bool {
			out = append(out, it.Value)
			return true
		})
		return out
	}
	if got := from(items["a3"].Seq()); !slices.Equal(got, []string{"a3", "a4", "a5", "a6"}) {
		t.Fatalf("from a3: %v", got)
	}
	q.Remove(items["a4"])
	q.Serve(items["a2"]) // takes a1's number; a1 takes a2's
	if got := from(items["a1"].Seq()); !slices.Equal(got, []string{"a1", "a3", "a5", "a6"}) {
		t.Fatalf("from a1's number: %v", got)
	}
	if got := from(items["a6"].Seq() + 1); len(got) != 0 {
		t.Fatalf("past the last: %v", got)
	}
	var first []string
	q.FIFOFrom(0, func(it *Item[string]) bool { first = append(first, it.Value); return false })
	if !slices.Equal(first, []string{"a1"}) {
		t.Fatalf("stopped at once: %v", first)
	}
}
