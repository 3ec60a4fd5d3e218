package fairq

import "math"

// The tenants of a lane with a caller waiting, as a binary min-heap by
// their head's finish, then its arrival.

// before reports whether a's head goes before b's.
func before[T any](a, b *tenant[T]) bool {
	if a.tag != b.tag {
		return a.tag < b.tag
	}
	return a.items[a.head].seq < b.items[b.head].seq
}

func (l *lane[T]) swap(i, j int) {
	h := l.heap
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}

func (l *lane[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !before(l.heap[i], l.heap[p]) {
			return
		}
		l.swap(i, p)
		i = p
	}
}

func (l *lane[T]) down(i int) {
	n := len(l.heap)
	for {
		m, a, b := i, 2*i+1, 2*i+2
		if a < n && before(l.heap[a], l.heap[m]) {
			m = a
		}
		if b < n && before(l.heap[b], l.heap[m]) {
			m = b
		}
		if m == i {
			return
		}
		l.swap(i, m)
		i = m
	}
}

// fix restores the heap after the tenant at i changed its head.
func (l *lane[T]) fix(i int) {
	t := l.heap[i]
	l.up(i)
	l.down(t.idx)
}

// remove takes the tenant at i out of the heap.
func (l *lane[T]) remove(i int) {
	last := len(l.heap) - 1
	if i != last {
		l.swap(i, last)
	}
	l.heap[last] = nil
	l.heap = l.heap[:last]
	if i != last {
		l.fix(i)
	}
}

// Ahead returns the values of the callers that go before it, which must be
// waiting in q, in the order they go if nobody else arrives or leaves.
func (q *Queue[T]) Ahead(it *Item[T]) []T {
	var out []T
	for _, l := range q.lanes {
		if l.prio < it.c.Prio {
			break
		}
		if l.prio > it.c.Prio {
			out = l.aheadIn(nil, out) // all of them
			continue
		}
		out = l.aheadIn(it, out)
	}
	return out
}

// aheadIn appends to out the callers of l that go before it (all of them
// if it is nil), in order, by serving them on a copy of the finishes.
func (l *lane[T]) aheadIn(it *Item[T], out []T) []T {
	type cursor struct {
		t    *tenant[T]
		next int
		f    float64
	}
	cs := make([]cursor, 0, len(l.heap))
	for _, t := range l.heap {
		cs = append(cs, cursor{t: t, next: t.head, f: t.f})
	}
	for {
		best, bestTag := -1, math.Inf(1)
		var bestSeq uint64
		for i := range cs {
			c := &cs[i]
			for c.next < len(c.t.items) && c.t.items[c.next].gone {
				c.next++
			}
			if c.next == len(c.t.items) {
				continue
			}
			x := c.t.items[c.next]
			tag := finish(x, c.f)
			if best < 0 || tag < bestTag || tag == bestTag && x.seq < bestSeq {
				best, bestTag, bestSeq = i, tag, x.seq
			}
		}
		if best < 0 {
			return out
		}
		c := &cs[best]
		x := c.t.items[c.next]
		if x == it {
			return out
		}
		out = append(out, x.Value)
		c.f = bestTag
		c.next++
	}
}
