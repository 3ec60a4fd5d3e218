package admission

import (
	"math"
	"slices"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// Waiter is one caller (or operator item) queued at a front for tokens.
// The front sets and reads Ready, State, Err, Arrived, GrantedAt, N and
// Who; Kind and Token are the planner's (what a grant does, and what it
// gave). Fields are guarded by the limiter's lock, except Ready, which the
// caller selects on.
type Waiter struct {
	Ready     chan struct{} // closed when the tokens are granted (or the wait failed)
	Arrived   int64         // offsets of the limiter's clock
	GrantedAt int64
	N         int    // tokens asked for
	Token     uint64 // the planner's id of what it granted (a hold's), once granted
	Err       error  // why the wait failed, with State Failed
	Notify    func() // if set, called (under the limiter's lock) when the waiter leaves the queue granted or failed
	Who       fairq.Caller
	Kind      uint8 // the planner's: what a grant does
	State     State
	// Ask is the planner's: what it sends, or is to send, for the waiter
	// (redisstore's group commit: the waiter's ask, a *pending; a caller
	// whose ask is sent again keeps its Waiter).
	Ask   any
	item  fairq.Item[*Waiter] // its place in the queue
	first bool                // requeued: in Queue.first, not in the fair queue
}

// State is where a Waiter stands.
type State uint8

// A Waiter is Waiting until it is Granted its tokens, Cancelled (its
// caller gave up) or Failed (it can never be served).
const (
	Waiting State = iota
	Granted
	Cancelled
	Failed
)

// NewWaiter returns a waiting Waiter of n tokens, of kind for the planner,
// ordered by who (its priority and tenant), arriving at now.
func NewWaiter(now int64, n int, kind uint8, who fairq.Caller) *Waiter {
	who.Cost = n
	return &Waiter{Ready: make(chan struct{}), Arrived: now, N: n, Kind: kind, Who: who}
}

// Queue holds the waiters in the order they go: the highest priority
// first (SPEC.md, "Priorities"), then the tenant of the smallest virtual
// finish (SPEC.md, "Fair shares"), then arrival order; with one priority
// and one tenant (the usual case) it is the FIFO of SPEC's formula. The
// order is decided in one place, internal/fairq, which Queue only adapts
// to Waiters; a waiter given back its place (Requeue) goes ahead of that
// order within its priority. The zero Queue is empty and ready to use.
type Queue struct {
	q fairq.Queue[*Waiter]
	// first are the waiters requeued, highest priority first, each ahead
	// of the fair queue's of its priority (Requeue).
	first []*Waiter
	live  int // waiters still waiting
	cost  int // the tokens they ask for, together
}

// Live returns the number of waiters still waiting.
func (q *Queue) Live() int { return q.live }

// Cost returns the tokens the waiters still waiting ask for, together.
func (q *Queue) Cost() int { return q.cost }

// Push adds w, which waits, arriving now, at its place.
func (q *Queue) Push(w *Waiter) {
	w.item.Value = w
	q.q.Push(&w.item, w.Who)
	q.live++
	q.cost += w.N
}

// Peek returns the waiter that goes next, or nil.
func (q *Queue) Peek() *Waiter {
	if q.firstGoes() {
		return q.first[0]
	}
	if it := q.q.Peek(); it != nil {
		return it.Value
	}
	return nil
}

// firstGoes reports whether the first waiter requeued goes next: none of
// a higher priority waits in the fair queue.
func (q *Queue) firstGoes() bool {
	if len(q.first) == 0 {
		return false
	}
	it := q.q.Peek()
	return it == nil || q.first[0].Who.Prio >= it.Caller().Prio
}

// Pop removes the head, which must be waiting (Peek returned it), as
// served (a requeued head was charged its share when it was first
// served).
func (q *Queue) Pop() {
	if q.firstGoes() {
		q.cost -= q.first[0].N
		q.first[0].first = false
		q.first = slices.Delete(q.first, 0, 1)
	} else {
		q.cost -= q.q.Pop().Value.N
	}
	q.live--
}

// Requeue puts w, which was served (Pop) and gives its place back, back
// in the queue first of its priority: ahead of every waiter of its
// priority in the fair queue, behind those of a higher priority and those
// requeued before it; its tenant is not charged again when it is served.
func (q *Queue) Requeue(w *Waiter) {
	i := 0
	for i < len(q.first) && q.first[i].Who.Prio >= w.Who.Prio {
		i++
	}
	q.first = slices.Insert(q.first, i, w)
	w.first = true
	q.live++
	q.cost += w.N
}

// Cancel marks w as withdrawn and removes it; it must be waiting.
func (q *Queue) Cancel(w *Waiter) {
	w.State = Cancelled
	q.Remove(w)
}

// Remove takes w, which must be waiting, out of the queue, as if it had
// never arrived.
func (q *Queue) Remove(w *Waiter) {
	if w.first {
		w.first = false
		i := slices.Index(q.first, w)
		q.first = slices.Delete(q.first, i, i+1)
	} else {
		q.q.Remove(&w.item)
	}
	q.live--
	q.cost -= w.N
}

// Leads reports whether a caller c arriving now would go before every
// waiter.
func (q *Queue) Leads(c fairq.Caller) bool {
	return (len(q.first) == 0 || q.first[0].Who.Prio < c.Prio) && q.q.Leads(c)
}

// Admit records that a caller c that leads went at once (its share of the
// tenants' virtual time).
func (q *Queue) Admit(c fairq.Caller) { q.q.Admit(c) }

// Ahead returns the live waiters that go before w, which must be in the
// queue and waiting, in the order they go.
func (q *Queue) Ahead(w *Waiter) []*Waiter {
	if len(q.first) == 0 {
		return q.q.Ahead(&w.item)
	}
	if !w.first {
		return mergeFirst(q.q.Ahead(&w.item), q.first, w.Who.Prio)
	}
	var higher []*Waiter // the fair queue's waiters of a higher priority
	for _, x := range q.q.All() {
		if x.Who.Prio <= w.Who.Prio {
			break
		}
		higher = append(higher, x)
	}
	return mergeFirst(higher, q.first[:slices.Index(q.first, w)], w.Who.Prio)
}

// mergeFirst merges fair, waiters of the fair queue in their order, and
// the requeued waiters of first of priority prio or higher, each ahead of
// the fair queue's of its priority.
func mergeFirst(fair, first []*Waiter, prio int) []*Waiter {
	out := make([]*Waiter, 0, len(fair)+len(first))
	for _, r := range first {
		if r.Who.Prio < prio {
			break
		}
		for len(fair) > 0 && fair[0].Who.Prio > r.Who.Prio {
			out, fair = append(out, fair[0]), fair[1:]
		}
		out = append(out, r)
	}
	return append(out, fair...)
}

// Serve takes w, which waits, out of the queue as served, wherever it
// stands: a store's planner whose callers' departures were decided ahead
// (redisstore's group commit) serves each as its departure comes, in
// whatever order their goroutines wake (fairq.Queue.Serve: its tenant is
// charged as its next caller). A requeued w was charged when first
// served.
func (q *Queue) Serve(w *Waiter) {
	if w.first {
		q.Remove(w)
	} else {
		q.q.Serve(&w.item)
		q.live--
		q.cost -= w.N
	}
	w.State = Granted
}

// All returns the waiters, in the order they go if nobody else arrives or
// leaves.
func (q *Queue) All() []*Waiter {
	return mergeFirst(q.q.All(), q.first, math.MinInt)
}

// FIFO reports whether the waiters are of one priority and one tenant
// and none was requeued: they then go in arrival order, and a caller
// arriving now goes after all of them.
func (q *Queue) FIFO() bool { return len(q.first) == 0 && q.q.FIFO() }
