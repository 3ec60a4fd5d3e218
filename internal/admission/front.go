package admission

import (
	"math"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// Never is the instant of what will not happen by itself: tokens that only
// a release can free, a planner that has no change ahead.
const Never = int64(math.MaxInt64)

// Unknown is the earliest instant of a planner that cannot bound it
// without a round trip (Planner.Earliest): the front refuses nobody by
// its deadline at arrival, and the planner refuses later, once it knows,
// through Unservable.
const Unknown = int64(math.MinInt64)

// Planner is what a front asks of the limiter behind it: the tokens'
// side of admission. The front decides who goes (the order, the bound,
// deadlines, cancellation); the planner says when a caller of cost n can
// go and what a grant records. Every method is called with the limiter's
// lock held, by a front method the limiter called under it, and must not
// release it; instants are offsets of the limiter's clock.
//
// The in-memory planner (rxthrottle.Bucket over its sliding window)
// answers every question at once. A planner that needs a round trip
// (redisstore's group commit, which plans in batches) fits the same way:
// FreeAt returns Never while the head's answer is not back (the limiter
// sends the round trips itself), and the limiter calls Dispatch again
// when an answer comes, with the planner now answering from what the
// store said (the departure it gave); Grant then hands over what the
// store reserved for that caller. Because the queue and its order stay in
// the front, the callers go in SPEC.md's order in this process. Such a
// planner answers Earliest from what it last heard (a lower bound stays a
// lower bound as time passes), or Unknown; a refusal it learns from the
// store (its deadline comes before the departure the store would give)
// ends the wait through Unservable, which the front counts as a
// cancellation, as it counts a refusal at arrival. (redisstore's group
// commit decides deadlines from the store's answers instead, and its
// window's front, an Asking front, decides arrivals with DecideAsk: see
// the package's doc.)
type Planner interface {
	// FreeAt returns the earliest offset at which a caller of n tokens,
	// of the planner's kind, may go if nobody is ahead of it: its tokens
	// free and, for a hold, a place under a concurrency cap. It returns
	// Never while that waits for an event the limiter will report by
	// calling Dispatch (a release, an operator's emission).
	FreeAt(n int, kind uint8) int64
	// NextChange returns the next instant at which the planner's state
	// changes by itself (a hold times out and frees its tokens), or
	// Never: Dispatch arms the timer for it when the head waits on
	// Never.
	NextChange() int64
	// Grant gives w its tokens at now, recording what its kind records,
	// counting the admission and setting w.Token; FreeAt(w.N, w.Kind)
	// was no later than now.
	Grant(w *Waiter, now int64)
	// Unservable returns the error that ends w's wait if it can never be
	// served (a SetLimit lowered the smallest N below its cost), else
	// nil.
	Unservable(w *Waiter) error
	// Earliest returns the lower bound a deadline is checked against
	// (SPEC.md, "Deadlines"): the earliest offset at which a caller of n
	// tokens arriving at now could go if every caller ahead gave up and
	// every held token were released at now; Unknown if the planner
	// cannot tell without a round trip.
	Earliest(now int64, n int) int64
	// Left counts w leaving the queue (w.State says how: Granted,
	// Cancelled or Failed); empty says nobody waits any more.
	Left(w *Waiter, empty bool)
	// Clock is the clock the Timer runs on.
	Clock() clock.Clock
	// Wake is the Timer's callback: it takes the limiter's lock, reads
	// the clock, calls Timer's Expired and Dispatch, and unlocks.
	Wake()
}

// Front is the waiting side of a limiter: its queue and its timer,
// allocated when a caller first has to wait, so a limiter whose callers
// always find a token free never allocates them. The zero Front is empty.
// It is guarded by the limiter's lock.
type Front struct {
	w *waits
}

type waits struct {
	queue Queue
	timer Timer
}

// Waiting returns the number of callers waiting.
func (f *Front) Waiting() int {
	if f.w == nil {
		return 0
	}
	return f.w.queue.live
}

// Ahead returns the live waiters that go before w, which waits.
func (f *Front) Ahead(w *Waiter) []*Waiter { return f.w.queue.Ahead(w) }

// Probe returns the waiters that would go before a caller who of n tokens
// arriving now, in their order, and changes nothing: the probe is pushed
// and withdrawn as if it had never arrived. It returns nil if none would.
func (f *Front) Probe(who fairq.Caller, n int) []*Waiter {
	who.Cost = n
	if f.w == nil || f.w.queue.Leads(who) {
		return nil
	}
	probe := &Waiter{N: n, Who: who}
	f.w.queue.Push(probe)
	ahead := f.w.queue.Ahead(probe)
	f.w.queue.Remove(probe)
	return ahead
}

// Timer returns the front's timer, for the planner's Wake; nil if no
// caller has ever waited.
func (f *Front) Timer() *Timer {
	if f.w == nil {
		return nil
	}
	return &f.w.timer
}

// Verdict is the front's decision on a caller that did not find its
// tokens free with nobody waiting (Decide).
type Verdict uint8

// The verdicts of Decide.
const (
	// Go: the caller goes now, before the waiters of lower priority.
	Go Verdict = iota
	// Late: its deadline comes no later than the earliest instant it
	// could go; it is refused, consuming nothing.
	Late
	// Full: the queue bound is reached; it is refused, consuming nothing.
	Full
	// Wait: it waits, queued at its place.
	Wait
	// Ask (Asking.DecideAsk): nothing at arrival tells whether it goes
	// at once; it asks the store, whose answer decides.
	Ask
	// AskAtOnce (Asking.DecideAsk): the queue bound is reached; it asks
	// the store and goes only if the answer lets it go at once, else it
	// is refused as Full is, consuming nothing.
	AskAtOnce
)

// Arrival is what a caller's context says, read with no lock held.
type Arrival struct {
	Who         fairq.Caller  // its priority and tenant
	Left        time.Duration // until the deadline, if HasDeadline
	HasDeadline bool
	// Exempt: an operator's item, which keeps its place whatever its
	// deadline and the queue bound.
	Exempt bool
}

// Decide decides on a caller of n tokens of kind arriving at now with a,
// given bound, the queue bound (-1 for none): Go if it would go before
// every caller waiting (its priority and tenant) and its tokens are free,
// which the queue's order records as served; Late, with the earliest
// instant, if its deadline is no later (SPEC.md, "Deadlines"); Full if
// bound callers wait already (SPEC.md, "Queue bound"); else Wait. The
// limiter grants, refuses or queues (NewWaiter, Push).
func (f *Front) Decide(p Planner, now int64, n int, kind uint8, a Arrival, bound int) (Verdict, int64) {
	a.Who.Cost = n
	if f.leads(a.Who) && p.FreeAt(n, kind) <= now {
		if f.w != nil {
			f.w.queue.Admit(a.Who)
		}
		return Go, 0
	}
	if a.HasDeadline && !a.Exempt {
		if earliest := p.Earliest(now, n); earliest != Unknown && a.Left <= time.Duration(earliest-now) {
			return Late, earliest
		}
	}
	if bound >= 0 && !a.Exempt && f.Waiting() >= bound {
		return Full, 0
	}
	return Wait, 0
}

// leads reports whether a caller who arriving now would go before every
// waiter.
func (f *Front) leads(who fairq.Caller) bool { return f.w == nil || f.w.queue.Leads(who) }

// Push queues w, which waits, at its place, and reports whether it is the
// only one waiting. The limiter then calls Dispatch.
func (f *Front) Push(w *Waiter) (only bool) {
	if f.w == nil {
		f.w = new(waits)
	}
	f.w.queue.Push(w)
	return f.w.queue.live == 1
}

// Next returns the waiter that goes next, or nil if none waits.
func (f *Front) Next() *Waiter {
	if f.w == nil {
		return nil
	}
	return f.w.queue.Peek()
}

// Cancel withdraws w, which waits: it consumes nothing, and the limiter's
// next Dispatch plans the callers behind it as if it had never arrived.
func (f *Front) Cancel(p Planner, w *Waiter) {
	f.w.queue.Cancel(w)
	p.Left(w, f.w.queue.live == 0)
}

// Dispatch grants tokens to the head of the queue for as long as the
// planner has them free at now, then arms the timer for the instant the
// next head's tokens are free or the planner's next change, whichever is
// first (or disarms it: nobody waits, or the head waits for an event the
// limiter reports). The callers whose wait is over hear it last, once the
// timer is set: one that goes on to move a mock clock finds the next
// wake-up armed.
func (f *Front) Dispatch(p Planner, now int64) {
	ws := f.w
	if ws == nil {
		return // nobody has waited yet, and no timer was ever armed
	}
	var buf [8]*Waiter
	over := buf[:0] // the waiters whose wait is over, in order
	for w := ws.queue.Peek(); w != nil; w = ws.queue.Peek() {
		if err := p.Unservable(w); err != nil {
			ws.queue.Remove(w)
			w.State, w.Err = Failed, err
			p.Left(w, ws.queue.live == 0)
			over = append(over, w)
			continue
		}
		if at := p.FreeAt(w.N, w.Kind); at > now {
			if at = min(at, p.NextChange()); at == Never {
				break
			}
			ws.timer.WakeAt(p, at, time.Duration(at-now))
			release(over)
			return
		}
		ws.queue.Pop()
		w.State, w.GrantedAt = Granted, now
		p.Left(w, ws.queue.live == 0)
		p.Grant(w, now)
		over = append(over, w)
	}
	ws.timer.Disarm()
	release(over)
}

// release tells the callers of over that their wait is over.
func release(over []*Waiter) {
	for _, w := range over {
		w.tell()
	}
}

// tell tells w's caller that its wait is over.
func (w *Waiter) tell() {
	close(w.Ready)
	if w.Notify != nil {
		w.Notify()
	}
}
