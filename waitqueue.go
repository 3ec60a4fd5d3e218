package rxthrottle

import "github.com/rxthrottle/rxthrottle/internal/fairq"

// waiter is one caller (or operator item) queued for tokens.
type waiter struct {
	ready     chan struct{} // closed when the tokens are granted (or refused)
	arrived   int64         // window offsets
	grantedAt int64
	n         int       // tokens asked for
	kind      grantKind // what a grant does
	token     uint64    // the hold's id once granted, for grantToken
	err       error     // why the caller was refused, with state failed
	notify    func()    // if set, called (under the bucket's lock) on grant
	who       fairq.Caller
	state     waiterState
	item      fairq.Item[*waiter] // its place in the queue
}

// grantKind says what granting tokens to a caller does.
type grantKind uint8

const (
	// grantRecord (Wait): the departure is the completion; the tokens renew
	// W after it.
	grantRecord grantKind = iota
	// grantHold (the operators): the tokens are held until the item's
	// emission is recorded (flush) or they are given back (giveBack).
	grantHold
	// grantToken (Acquire): the tokens are held until Token.Release,
	// Token.Cancel or the hold timeout.
	grantToken
)

type waiterState uint8

const (
	waiting waiterState = iota
	granted
	cancelled
	failed // can never be served (a SetLimit made its cost too large)
)

// waitQueue holds the waiters in the order they go: the highest priority
// first (SPEC.md, "Priorities"), then the tenant of the smallest virtual
// finish (SPEC.md, "Fair shares"; WithTenant), then arrival order. With one
// priority and one tenant (the usual case) it is the FIFO of SPEC's
// formula. internal/fairq keeps the order.
type waitQueue struct {
	q    fairq.Queue[*waiter]
	live int // waiters still waiting
}

// push adds w, arriving now.
func (q *waitQueue) push(w *waiter) {
	w.item.Value = w
	q.q.Push(&w.item, w.who)
	q.live++
}

// peek returns the waiter that goes next, or nil.
func (q *waitQueue) peek() *waiter {
	if it := q.q.Peek(); it != nil {
		return it.Value
	}
	return nil
}

// pop removes the head, which must be waiting (peek returned it), as
// served.
func (q *waitQueue) pop() {
	q.q.Pop()
	q.live--
}

// cancel marks w as withdrawn and removes it; it must be waiting.
func (q *waitQueue) cancel(w *waiter) {
	w.state = cancelled
	q.remove(w)
}

// remove takes w, which must be waiting, out of the queue, as if it had
// never arrived.
func (q *waitQueue) remove(w *waiter) {
	q.q.Remove(&w.item)
	q.live--
}

// leads reports whether a caller c arriving now would go before every
// waiter.
func (q *waitQueue) leads(c fairq.Caller) bool { return q.q.Leads(c) }

// admit records that a caller c that leads went at once.
func (q *waitQueue) admit(c fairq.Caller) { q.q.Admit(c) }

// ahead returns the live waiters that go before w, which must be in the
// queue and waiting, in the order they go.
func (q *waitQueue) ahead(w *waiter) []*waiter { return q.q.Ahead(&w.item) }
