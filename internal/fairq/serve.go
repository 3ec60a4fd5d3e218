package fairq

import (
	"cmp"
	"slices"
)

// All returns the values of the callers waiting, in the order they go if
// nobody else arrives or leaves.
func (q *Queue[T]) All() []T {
	out := make([]T, 0, q.live)
	for _, l := range q.lanes {
		out = l.aheadIn(nil, out)
	}
	return out
}

// Serve removes it, which must be waiting in q, as served: as Pop does for
// the caller Peek returns. A user whose callers are not served one at a
// time at the head (redisstore's, whose departures were decided ahead and
// come in whatever order their goroutines wake) serves each as it goes.
// A caller served before an earlier caller of its tenant takes that
// caller's place first: it is charged as its tenant's next, and the
// earlier one keeps the later place (so a tenant's callers are always
// charged in arrival order).
func (q *Queue[T]) Serve(it *Item[T]) {
	t := it.t
	if h := t.items[t.head]; h != it {
		i := t.head + 1
		for t.items[i] != it {
			i++
		}
		t.items[t.head], t.items[i] = it, h
		it.seq, h.seq = h.seq, it.seq
		it.v, h.v = h.v, it.v
		t.tag = finish(it, t.f)
		t.l.fix(t.idx)
	}
	l := t.l
	l.v, t.f = max(l.v, t.tag), t.tag
	q.drop(t)
}

// FIFO reports whether the callers waiting are of one priority and one
// tenant: they then go in arrival order, and a caller arriving now goes
// after all of them.
func (q *Queue[T]) FIFO() bool {
	return len(q.lanes) == 0 || len(q.lanes) == 1 && len(q.lanes[0].heap) == 1
}

// Seq returns its arrival number, over the whole queue (a later arrival
// has a larger one). A caller served before an earlier caller of its
// tenant takes that caller's number (Serve), so the numbers of a tenant's
// callers stay in the order they go.
func (it *Item[T]) Seq() uint64 { return it.seq }

// FIFOFrom calls yield with the callers waiting whose arrival number
// (Seq) is at least seq, in the order they go, until yield returns
// false; q must be FIFO. It walks nothing before them: with one priority
// and one tenant the callers are their tenant's, in arrival order, and a
// binary search finds the first.
func (q *Queue[T]) FIFOFrom(seq uint64, yield func(*Item[T]) bool) {
	if len(q.lanes) == 0 {
		return
	}
	t := q.lanes[0].heap[0]
	items := t.items[t.head:]
	i, _ := slices.BinarySearchFunc(items, seq, func(it *Item[T], s uint64) int { return cmp.Compare(it.seq, s) })
	for _, it := range items[i:] {
		if !it.gone && !yield(it) {
			return
		}
	}
}
