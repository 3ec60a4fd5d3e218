package marble

import (
	"container/heap"
	"time"
)

// Action classes: at one instant, expectations subscribe and unsubscribe
// before sources emit, as in rxjs, where those actions are scheduled while
// the test body runs, before any source's.
const (
	classSubscription = iota
	classEmission
)

// action is something the scheduler does at a virtual instant.
type action struct {
	at    time.Duration // since the start of Run
	class int
	seq   uint64 // scheduling order, the tie-break within an instant and class
	run   func()
}

// actionQueue is a min-heap of actions ordered by (at, class, seq), like
// rxjs's VirtualTimeScheduler orders by (delay, index).
type actionQueue []*action

func (q actionQueue) Len() int { return len(q) }

func (q actionQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.class != b.class {
		return a.class < b.class
	}
	return a.seq < b.seq
}

func (q actionQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *actionQueue) Push(x any) { *q = append(*q, x.(*action)) }

func (q *actionQueue) Pop() any {
	old := *q
	a := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return a
}

func (q *actionQueue) push(a *action) { heap.Push(q, a) }

func (q actionQueue) peek() *action {
	if len(q) == 0 {
		return nil
	}
	return q[0]
}

// popDue removes and returns the first action due at or before now, or nil.
func (q *actionQueue) popDue(now time.Duration) *action {
	if a := q.peek(); a != nil && a.at <= now {
		return heap.Pop(q).(*action)
	}
	return nil
}
