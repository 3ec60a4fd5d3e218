package rxthrottle

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
	state     waiterState
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

// waitQueue is the FIFO of waiters. A cancelled waiter is only marked and
// skipped when it reaches the head, so cancelling from the middle is O(1)
// and the queue never has to be searched to remove it.
type waitQueue struct {
	items []*waiter
	head  int
	live  int // waiters still waiting
}

func (q *waitQueue) push(w *waiter) {
	q.items = append(q.items, w)
	q.live++
}

// peek returns the first waiter still waiting, dropping cancelled ones, or
// nil.
func (q *waitQueue) peek() *waiter {
	for q.head < len(q.items) {
		if w := q.items[q.head]; w.state == waiting {
			return w
		}
		q.drop()
	}
	return nil
}

// pop removes the head, which must be waiting (peek returned it).
func (q *waitQueue) pop() {
	q.live--
	q.drop()
}

// drop removes the head slot and reclaims space once the queue is empty or
// half of its slice is dead, so a long-lived queue does not grow without end.
func (q *waitQueue) drop() {
	q.items[q.head] = nil
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head > 32 && q.head*2 > len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

// cancel marks w as withdrawn; it must be waiting.
func (q *waitQueue) cancel(w *waiter) {
	w.state = cancelled
	q.live--
}

// ahead returns the live waiters before w, which must be in the queue and
// waiting, oldest first.
func (q *waitQueue) ahead(w *waiter) []*waiter {
	var out []*waiter
	for _, x := range q.items[q.head:] {
		if x == w {
			return out
		}
		if x.state == waiting {
			out = append(out, x)
		}
	}
	return out
}
