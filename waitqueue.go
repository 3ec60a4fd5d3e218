package rxthrottle

// waiter is one caller (or operator item) queued for a token.
type waiter struct {
	ready     chan struct{} // closed when the token is granted
	arrived   int64         // window offsets
	grantedAt int64
	hold      bool   // the grant holds a token until its emission is recorded
	notify    func() // if set, called (under the bucket's lock) on grant
	state     waiterState
}

type waiterState uint8

const (
	waiting waiterState = iota
	granted
	cancelled
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

// position returns how many live waiters are ahead of w, which must be in
// the queue and waiting.
func (q *waitQueue) position(w *waiter) int {
	n := 0
	for _, x := range q.items[q.head:] {
		if x == w {
			return n
		}
		if x.state == waiting {
			n++
		}
	}
	return n
}
