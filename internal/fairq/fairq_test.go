package fairq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// step is one operation of a table: push a caller named name, pop (want
// is the name Pop must return), remove name, or ask Leads (want "lead" or
// "wait").
type step struct {
	op   string // "push", "pop", "remove", "leads", "admit"
	name string
	c    Caller
	want string
}

func run(t *testing.T, steps []step) {
	t.Helper()
	var q Queue[string]
	items := map[string]*Item[string]{}
	for i, s := range steps {
		switch s.op {
		case "push":
			it := &Item[string]{Value: s.name}
			items[s.name] = it
			q.Push(it, s.c)
		case "pop":
			if p := q.Peek(); p == nil || p.Value != s.want {
				t.Fatalf("step %d: Peek = %v, want %s", i, p, s.want)
			}
			if got := q.Pop().Value; got != s.want {
				t.Fatalf("step %d: Pop = %s, want %s", i, got, s.want)
			}
		case "remove":
			q.Remove(items[s.name])
		case "leads":
			if got := map[bool]string{true: "lead", false: "wait"}[q.Leads(s.c)]; got != s.want {
				t.Fatalf("step %d: Leads(%+v) = %s, want %s", i, s.c, got, s.want)
			}
		case "admit":
			q.Admit(s.c)
		}
	}
	if q.Len() != 0 || q.Peek() != nil {
		t.Fatalf("end: %d callers left", q.Len())
	}
}

func push(name, tenant string, w float64) step {
	return step{op: "push", name: name, c: Caller{Tenant: tenant, Weight: w}}
}
func pop(want string) step { return step{op: "pop", want: want} }

func TestTwoTenantsAlternate(t *testing.T) {
	run(t, []step{
		push("a1", "A", 1), push("a2", "A", 1), push("a3", "A", 1), push("a4", "A", 1),
		pop("a1"),                              // V = 1
		push("b1", "B", 1), push("b2", "B", 1), // finishes 2, 3
		pop("a2"), pop("b1"), pop("a3"), pop("b2"), pop("a4"),
	})
}

func TestWeightsTwoToOne(t *testing.T) {
	var steps []step
	for i := range 6 {
		steps = append(steps, push(fmt.Sprint("a", i), "A", 2), push(fmt.Sprint("b", i), "B", 1))
	}
	// A's finishes 0.5, 1, 1.5, 2, ...; B's 1, 2, 3: at a tie the earlier
	// arrival goes (b0 before a1, b1 before a3).
	for _, n := range []string{"a0", "b0", "a1", "a2", "b1", "a3", "a4", "b2", "a5", "b3", "b4", "b5"} {
		steps = append(steps, pop(n))
	}
	run(t, steps)
}

func TestIdleTenantKeepsNoCredit(t *testing.T) {
	run(t, []step{
		push("a1", "A", 1), push("a2", "A", 1), push("a3", "A", 1), push("b0", "B", 1),
		pop("a1"), pop("b0"), pop("a2"), // V = 2
		// B comes back: its finish starts from V (3, a tie that a3 wins),
		// not from its old finish 1 (2, which would go before a3).
		push("b1", "B", 1), push("b2", "B", 1),
		pop("a3"), pop("b1"), pop("b2"),
	})
}

func TestPrioritiesFirst(t *testing.T) {
	run(t, []step{
		push("a1", "A", 1), push("a2", "A", 1),
		{op: "push", name: "u", c: Caller{Prio: 1, Tenant: "A"}},
		push("b1", "B", 5),
		{op: "push", name: "low", c: Caller{Prio: -1, Tenant: "C", Weight: 100}},
		pop("u"), pop("b1"), pop("a1"), pop("a2"), pop("low"),
	})
}

func TestRemoveAsIfNeverArrived(t *testing.T) {
	run(t, []step{
		push("a1", "A", 1), push("a2", "A", 1), push("b1", "B", 1), push("b2", "B", 1),
		{op: "remove", name: "a1"}, // a2 is A's head now, finish 1
		pop("a2"), pop("b1"), pop("b2"),
		push("x", "X", 1), push("y", "Y", 1), {op: "remove", name: "y"}, pop("x"),
		push("c1", "C", 1), push("c2", "C", 1), push("c3", "C", 1),
		{op: "remove", name: "c2"}, pop("c1"), pop("c3"),
	})
}

func TestCostWeighs(t *testing.T) {
	run(t, []step{
		{op: "push", name: "a3", c: Caller{Tenant: "A", Cost: 3}}, // finish 3
		push("b1", "B", 1), push("b2", "B", 1), push("b3", "B", 1), push("b4", "B", 1),
		pop("b1"), pop("b2"), pop("a3"), pop("b3"), pop("b4"),
	})
}

func TestLeadsAndAdmit(t *testing.T) {
	run(t, []step{
		{op: "leads", c: Caller{Tenant: "A"}, want: "lead"}, // nobody waits
		push("a1", "A", 1), push("a2", "A", 1), // finish 1, then 2
		{op: "leads", c: Caller{Tenant: "A"}, want: "wait"},            // its own tenant waits
		{op: "leads", c: Caller{Tenant: "B"}, want: "wait"},            // finish 1: a tie goes to a1
		{op: "leads", c: Caller{Tenant: "B", Weight: 2}, want: "lead"}, // 0.5
		{op: "leads", c: Caller{Tenant: "B", Prio: 1}, want: "lead"},
		{op: "leads", c: Caller{Tenant: "B", Prio: -1, Weight: 9}, want: "wait"},
		{op: "admit", c: Caller{Tenant: "B", Weight: 2}}, // V = 0.5
		push("b1", "B", 2), // finish 1: after a1 (a tie), before a2
		pop("a1"), pop("b1"), pop("a2"),
	})
}

func TestDefaultsAreOneTenantFIFO(t *testing.T) {
	var steps []step
	for i := range 50 {
		steps = append(steps, step{op: "push", name: fmt.Sprint(i), c: Caller{Weight: math.NaN(), Cost: i % 3}})
	}
	for i := range 50 {
		steps = append(steps, pop(fmt.Sprint(i)))
	}
	run(t, steps)
}

func TestAhead(t *testing.T) {
	var q Queue[string]
	mk := func(name string, c Caller) *Item[string] {
		it := &Item[string]{Value: name}
		q.Push(it, c)
		return it
	}
	mk("a1", Caller{Tenant: "A"})
	a2 := mk("a2", Caller{Tenant: "A"})
	mk("b1", Caller{Tenant: "B"})
	b2 := mk("b2", Caller{Tenant: "B"})
	mk("u", Caller{Tenant: "B", Prio: 1})
	low := mk("low", Caller{Prio: -1})
	if got, want := q.Ahead(b2), []string{"u", "a1", "b1", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("Ahead(b2) = %v, want %v", got, want)
	}
	q.Remove(a2)
	if got, want := q.Ahead(low), []string{"u", "a1", "b1", "b2"}; !slices.Equal(got, want) {
		t.Fatalf("Ahead(low) = %v, want %v", got, want)
	}
}

// TestAgainstNaive runs random operations on a Queue and on a naive
// restatement of the rule that remembers every finish and recomputes the
// next caller by scanning everyone, and compares every Peek, Leads and
// Ahead.
func TestAgainstNaive(t *testing.T) {
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 31))
		var q Queue[int]
		var n naive
		var items []*Item[int]
		for op := range 60 {
			c := Caller{Prio: r.IntN(3) - 1, Tenant: fmt.Sprint(r.IntN(4)), Weight: []float64{1, 2, 0.5, 3}[r.IntN(4)], Cost: 1 + r.IntN(3)}
			if r.IntN(3) == 0 {
				c.Prio = 0
			}
			switch k := r.IntN(10); {
			case k < 4:
				it := &Item[int]{Value: len(items)}
				items = append(items, it)
				q.Push(it, c)
				n.push(c)
			case k < 7 && q.Len() > 0:
				if got, want := q.Pop().Value, n.pop(); got != want {
					t.Fatalf("seed %d op %d: Pop = %d, want %d", seed, op, got, want)
				}
			case k < 8 && q.Len() > 0:
				i := n.waiting[r.IntN(len(n.waiting))]
				q.Remove(items[i])
				n.remove(i)
			case k < 9:
				if got, want := q.Leads(c), n.leads(c); got != want {
					t.Fatalf("seed %d op %d: Leads(%+v) = %v, want %v", seed, op, c, got, want)
				}
				if q.Leads(c) {
					q.Admit(c)
					n.admit(c)
				}
			case q.Len() > 0:
				i := n.waiting[r.IntN(len(n.waiting))]
				if got, want := q.Ahead(items[i]), n.ahead(i); !slices.Equal(got, want) {
					t.Fatalf("seed %d op %d: Ahead(%d) = %v, want %v", seed, op, i, got, want)
				}
			}
			if q.Len() != len(n.waiting) {
				t.Fatalf("seed %d op %d: Len = %d, want %d", seed, op, q.Len(), len(n.waiting))
			}
		}
	}
}

// TestForgets checks that a queue keeps nothing of the tenants and
// priorities that no longer wait.
func TestForgets(t *testing.T) {
	var q Queue[int]
	items := make([]*Item[int], 300)
	for i := range items {
		items[i] = &Item[int]{Value: i}
		q.Push(items[i], Caller{Prio: i % 3, Tenant: fmt.Sprint(i)})
	}
	for i := range items {
		if i%2 == 0 {
			q.Remove(items[i])
		}
	}
	for q.Len() > 0 {
		q.Pop()
	}
	if len(q.lanes) != 0 || len(q.spare.tenants) != 0 || len(q.spare.heap) != 0 || q.spare.v != 0 {
		t.Fatalf("after all left: %d lanes, spare lane %+v", len(q.lanes), q.spare)
	}
}
