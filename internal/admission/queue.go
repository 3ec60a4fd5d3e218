package admission

import "github.com/rxthrottle/rxthrottle/internal/fairq"

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
	item      fairq.Item[*Waiter] // its place in the queue
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
// to Waiters. The zero Queue is empty and ready to use.
type Queue struct {
	q    fairq.Queue[*Waiter]
	live int // waiters still waiting
}

// Live returns the number of waiters still waiting.
func (q *Queue) Live() int { return q.live }

// Push adds w, which waits, arriving now, at its place.
func (q *Queue) Push(w *Waiter) {
	w.item.Value = w
	q.q.Push(&w.item, w.Who)
	q.live++
}

// Peek returns the waiter that goes next, or nil.
func (q *Queue) Peek() *Waiter {
	if it := q.q.Peek(); it != nil {
		return it.Value
	}
	return nil
}

// Pop removes the head, which must be waiting (Peek returned it), as
// served.
func (q *Queue) Pop() {
	q.q.Pop()
	q.live--
}

// Cancel marks w as withdrawn and removes it; it must be waiting.
func (q *Queue) Cancel(w *Waiter) {
	w.State = Cancelled
	q.Remove(w)
}

// Remove takes w, which must be waiting, out of the queue, as if it had
// never arrived.
func (q *Queue) Remove(w *Waiter) {
	q.q.Remove(&w.item)
	q.live--
}

// Leads reports whether a caller c arriving now would go before every
// waiter.
func (q *Queue) Leads(c fairq.Caller) bool { return q.q.Leads(c) }

// Admit records that a caller c that leads went at once (its share of the
// tenants' virtual time).
func (q *Queue) Admit(c fairq.Caller) { q.q.Admit(c) }

// Ahead returns the live waiters that go before w, which must be in the
// queue and waiting, in the order they go.
func (q *Queue) Ahead(w *Waiter) []*Waiter { return q.q.Ahead(&w.item) }
