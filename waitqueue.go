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
	prio      int       // WithPriority's; higher goes first
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

// waitQueue holds the waiters in the order they go: the highest priority
// first, then arrival order (SPEC.md, "Priorities"). Each priority has a
// FIFO lane of its own, the lanes sorted by priority, highest first; with
// one priority (the usual case) there is one lane and the queue is the FIFO
// of SPEC's formula. A cancelled waiter is only marked and skipped when it
// reaches the head of its lane, so cancelling from the middle is O(1) and
// no lane has to be searched to remove it.
type waitQueue struct {
	lanes []lane // by priority, highest first; empty lanes are removed
	live  int    // waiters still waiting, over all lanes
}

// lane is the FIFO of the waiters of one priority.
type lane struct {
	prio  int
	items []*waiter
	head  int
	live  int
}

// push adds w at the end of its priority's lane.
func (q *waitQueue) push(w *waiter) {
	i := 0
	for i < len(q.lanes) && q.lanes[i].prio > w.prio {
		i++
	}
	if i == len(q.lanes) || q.lanes[i].prio != w.prio {
		q.lanes = append(q.lanes, lane{})
		copy(q.lanes[i+1:], q.lanes[i:])
		q.lanes[i] = lane{prio: w.prio}
	}
	l := &q.lanes[i]
	l.items = append(l.items, w)
	l.live++
	q.live++
}

// peek returns the first waiter still waiting, dropping cancelled ones, or
// nil.
func (q *waitQueue) peek() *waiter {
	for len(q.lanes) > 0 {
		l := &q.lanes[0]
		for l.head < len(l.items) {
			if w := l.items[l.head]; w.state == waiting {
				return w
			}
			l.drop()
		}
		q.dropLane()
	}
	return nil
}

// dropLane removes the first lane, which is empty. A lane that was the only
// one keeps its slice for the next waiters.
func (q *waitQueue) dropLane() {
	if len(q.lanes) == 1 {
		q.lanes[0].items, q.lanes[0].head = q.lanes[0].items[:0], 0
		q.lanes = q.lanes[:0]
		return
	}
	copy(q.lanes, q.lanes[1:])
	q.lanes[len(q.lanes)-1] = lane{}
	q.lanes = q.lanes[:len(q.lanes)-1]
}

// pop removes the head, which must be waiting (peek returned it).
func (q *waitQueue) pop() {
	q.live--
	q.lanes[0].live--
	q.lanes[0].drop()
}

// maxWaitingPrio returns the highest priority of a waiter still waiting,
// and false if none waits.
func (q *waitQueue) maxWaitingPrio() (int, bool) {
	for i := range q.lanes {
		if q.lanes[i].live > 0 {
			return q.lanes[i].prio, true
		}
	}
	return 0, false
}

// drop removes the head slot and reclaims space once the lane is empty or
// half of its slice is dead, so a long-lived queue does not grow without end.
func (l *lane) drop() {
	l.items[l.head] = nil
	l.head++
	switch {
	case l.head == len(l.items):
		l.items, l.head = l.items[:0], 0
	case l.head > 32 && l.head*2 > len(l.items):
		n := copy(l.items, l.items[l.head:])
		clear(l.items[n:])
		l.items, l.head = l.items[:n], 0
	}
}

// cancel marks w as withdrawn; it must be waiting.
func (q *waitQueue) cancel(w *waiter) {
	w.state = cancelled
	q.live--
	for i := range q.lanes {
		if q.lanes[i].prio == w.prio {
			q.lanes[i].live--
			return
		}
	}
}

// ahead returns the live waiters that go before w, which must be in the
// queue and waiting, in the order they go.
func (q *waitQueue) ahead(w *waiter) []*waiter {
	var out []*waiter
	for i := range q.lanes {
		for _, x := range q.lanes[i].items[q.lanes[i].head:] {
			if x == w {
				return out
			}
			if x.state == waiting {
				out = append(out, x)
			}
		}
	}
	return out
}
