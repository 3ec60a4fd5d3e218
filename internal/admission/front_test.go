package admission

import (
	"errors"
	"testing"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// planner is a Planner over a count of free tokens, each free from an
// instant: a caller of n goes when the nth token is free.
type planner struct {
	free     []int64 // the instants from which each token is free, sorted
	change   int64
	minN     int
	granted  []*Waiter
	left     int
	earliest int64
}

func (p *planner) FreeAt(n int, _ uint8) int64 {
	if n > len(p.free) {
		return Never
	}
	return p.free[n-1]
}
func (p *planner) NextChange() int64 { return p.change }
func (p *planner) Grant(w *Waiter, now int64) {
	p.free = p.free[w.N:]
	p.granted = append(p.granted, w)
}
func (p *planner) Unservable(w *Waiter) error {
	if p.minN > 0 && w.N > p.minN {
		return errors.New("too costly")
	}
	return nil
}
func (p *planner) Earliest(now int64, n int) int64 {
	if p.earliest == Unknown {
		return Unknown
	}
	return max(now, p.earliest)
}
func (p *planner) Left(w *Waiter, empty bool) { p.left++ }
func (p *planner) Clock() clock.Clock         { return clock.NewMock() }
func (p *planner) Wake()                      {}

// TestDispatchOrder: the front grants in priority order, then arrival
// order, skips the cancelled, fails the unservable, and stops at the first
// head whose tokens are not free (it never lets a later caller overtake
// it, even one whose cost would fit).
func TestDispatchOrder(t *testing.T) {
	p := &planner{free: []int64{0, 0, 0, 10, 10}, change: Never, minN: 3}
	var f Front
	a := NewWaiter(0, 1, 0, fairq.Caller{Prio: 0})
	b := NewWaiter(0, 1, 0, fairq.Caller{Prio: 5})
	c := NewWaiter(0, 1, 0, fairq.Caller{Prio: 0})
	d := NewWaiter(0, 4, 0, fairq.Caller{Prio: 0}) // unservable: above minN
	e := NewWaiter(0, 2, 0, fairq.Caller{Prio: -1})
	g := NewWaiter(0, 1, 0, fairq.Caller{Prio: -1})
	for _, w := range []*Waiter{a, b, c, d, e, g} {
		f.Push(w)
	}
	f.Cancel(p, c)
	f.Dispatch(p, 0)
	want := []*Waiter{b, a}
	if len(p.granted) != len(want) {
		t.Fatalf("granted %d, want %d", len(p.granted), len(want))
	}
	for i, w := range want {
		if p.granted[i] != w {
			t.Errorf("grant %d: prio %d, want prio %d", i, p.granted[i].Who.Prio, w.Who.Prio)
		}
	}
	if d.State != Failed || d.Err == nil {
		t.Errorf("the unservable waiter: state %d, err %v", d.State, d.Err)
	}
	if e.State != Waiting || g.State != Waiting {
		t.Errorf("e (2 tokens, 1 free) must wait and g must not overtake it: %d %d", e.State, g.State)
	}
	if got := f.Waiting(); got != 2 {
		t.Errorf("Waiting() = %d, want 2", got)
	}
	f.Dispatch(p, 10)
	if e.State != Granted || g.State != Granted || e.GrantedAt != 10 {
		t.Errorf("at 10: e %d at %d, g %d", e.State, e.GrantedAt, g.State)
	}
	if p.left != 6 {
		t.Errorf("Left called %d times, want 6 (every waiter once)", p.left)
	}
}

// TestDecide: the verdicts at arrival, step by step.
func TestDecide(t *testing.T) {
	for i, s := range []struct {
		free     []int64
		queued   []int // priorities already waiting
		a        Arrival
		bound    int
		earliest int64
		want     Verdict
	}{
		{free: []int64{0}, bound: -1, want: Go},
		{free: []int64{5}, bound: -1, want: Wait},
		{free: []int64{0}, queued: []int{0}, bound: -1, want: Wait},                                       // an equal priority waits
		{free: []int64{0}, queued: []int{0}, a: Arrival{Who: fairq.Caller{Prio: 1}}, bound: -1, want: Go}, // a higher one goes first
		{free: []int64{5}, a: Arrival{HasDeadline: true, Left: 5}, earliest: 5, bound: -1, want: Late},
		{free: []int64{5}, a: Arrival{HasDeadline: true, Left: 6}, earliest: 5, bound: -1, want: Wait},
		{free: []int64{5}, a: Arrival{HasDeadline: true, Left: 5, Exempt: true}, earliest: 5, bound: -1, want: Wait},
		{free: []int64{5}, queued: []int{0}, bound: 1, want: Full},
		{free: []int64{5}, queued: []int{0}, bound: 1, a: Arrival{Exempt: true}, want: Wait},
		{free: []int64{5}, bound: 0, want: Full},
		{free: []int64{0}, bound: 0, want: Go}, // a bound refuses only who would wait
		{free: []int64{5}, a: Arrival{HasDeadline: true, Left: 1}, earliest: Unknown, bound: -1, want: Wait},
	} {
		p := &planner{free: s.free, change: Never, earliest: s.earliest}
		var f Front
		for _, prio := range s.queued {
			f.Push(NewWaiter(0, 1, 0, fairq.Caller{Prio: prio}))
		}
		if got, _ := f.Decide(p, 0, 1, 0, s.a, s.bound); got != s.want {
			t.Errorf("step %d: Decide = %d, want %d", i, got, s.want)
		}
	}
}

// TestDispatchArmsTheTimer: a head that waits arms the one timer for the
// earlier of its tokens and the planner's next change, and a head waiting
// on Never with no change ahead disarms it.
func TestDispatchArmsTheTimer(t *testing.T) {
	p := &planner{free: []int64{30}, change: 20}
	var f Front
	f.Push(NewWaiter(0, 1, 0, fairq.Caller{Prio: 0}))
	f.Dispatch(p, 0)
	if tm := f.Timer(); !tm.armed || tm.at != 20 {
		t.Fatalf("timer armed %v at %d, want at 20", tm.armed, tm.at)
	}
	p.free, p.change = nil, Never
	f.Dispatch(p, 0)
	if f.Timer().armed {
		t.Fatal("the timer is still armed for a head that waits on a release")
	}
}

// TestDispatchArmsBeforeItReleases: a caller whose wait is over hears it
// only once the timer is armed for the next head, so that a caller that
// goes on to move a mock clock (ExampleWithPriority does) cannot move it
// past a wake-up that is not yet armed, which then never fires.
func TestDispatchArmsBeforeItReleases(t *testing.T) {
	p := &planner{free: []int64{0, 10}, change: Never}
	var f Front
	first, second := NewWaiter(0, 1, 0, fairq.Caller{Prio: 0}), NewWaiter(0, 1, 0, fairq.Caller{Prio: 0})
	armed := false
	first.Notify = func() { armed = f.Timer().armed && f.Timer().at == 10 }
	f.Push(first)
	f.Push(second)
	f.Dispatch(p, 0)
	if first.State != Granted || second.State != Waiting {
		t.Fatalf("states %d %d", first.State, second.State)
	}
	if !armed {
		t.Fatal("the first caller heard of its grant before the timer was armed for the second")
	}
}
