// Package fairq orders the callers waiting for one quota (SPEC.md, "Fair
// shares" and "Priorities"): the highest priority first; within a
// priority, the tenant whose next caller has the smallest virtual finish,
// then the earliest arrival; within a tenant, arrival order.
//
// A caller of cost n and weight w from tenant t, arriving when its
// priority's virtual time is V, gets, once it is the first of t's callers
// still waiting, the virtual finish
//
//	F = max(V, F_t) + n/w
//
// where F_t is the finish of t's last caller served. Serving a caller moves
// the virtual time up to its finish (a caller behind a withdrawn one may
// finish below it: it goes first, and the virtual time stays). A tenant with no caller waiting keeps no
// credit: its finish is then at most the virtual time, so it is forgotten,
// and a priority with no caller waiting starts its virtual time over at 0
// (neither changes any order). A caller withdrawn before it is served
// (Remove) changes no finish: the callers behind it are ordered as if it
// had never arrived.
//
// A Queue does no locking: its user holds its own lock around every call.
// Its memory is that of the callers waiting.
package fairq

import (
	"math"
	"slices"
)

// Caller is what orders one caller.
type Caller struct {
	Prio   int     // higher goes first
	Tenant string  // "" is the default tenant
	Weight float64 // the tenant's share; not a positive finite number: 1
	Cost   int     // tokens; below 1: 1
}

// norm returns c with its weight and cost made valid.
func (c Caller) norm() Caller {
	if !(c.Weight > 0) || math.IsInf(c.Weight, 1) {
		c.Weight = 1
	}
	c.Cost = max(c.Cost, 1)
	return c
}

// step returns the virtual time one call of c takes: n/w.
func (c Caller) step() float64 { return float64(c.Cost) / c.Weight }

// Item is one caller in a Queue. Its user owns it (it may be embedded in a
// struct of the user's) and gives it to Push; Value is the user's.
type Item[T any] struct {
	Value T

	c    Caller
	seq  uint64  // arrival order, over the whole queue
	v    float64 // the virtual time of its priority at its arrival
	t    *tenant[T]
	gone bool // withdrawn (Remove) before it reached its tenant's head
}

// Caller returns what it was pushed with, its weight and cost made valid.
func (it *Item[T]) Caller() Caller { return it.c }

// Queue is the callers waiting, in the order they go. The zero Queue is
// empty and ready to use.
type Queue[T any] struct {
	lanes []*lane[T] // by priority, highest first; only lanes with callers
	spare *lane[T]   // the last lane emptied, kept for reuse
	live  int
	seq   uint64
}

// lane is the callers of one priority.
type lane[T any] struct {
	prio    int
	v       float64               // the virtual time
	tenants map[string]*tenant[T] // those with a caller waiting
	heap    []*tenant[T]          // the same, by their head's finish
	live    int
}

// tenant is the callers of one tenant in one lane, in arrival order.
type tenant[T any] struct {
	key   string
	l     *lane[T]
	f     float64 // the finish of its last caller served; -Inf if none
	items []*Item[T]
	head  int     // items[head] is its first caller still waiting
	tag   float64 // that caller's finish
	live  int
	idx   int // in l.heap
}

// Len returns the number of callers waiting.
func (q *Queue[T]) Len() int { return q.live }

// Push adds it, a caller c arriving now. it must not be in a queue.
func (q *Queue[T]) Push(it *Item[T], c Caller) {
	c = c.norm()
	l := q.laneFor(c.Prio)
	t := l.tenants[c.Tenant]
	if t == nil {
		t = &tenant[T]{key: c.Tenant, l: l, f: math.Inf(-1)}
		l.tenants[c.Tenant] = t
	}
	q.seq++
	it.c, it.seq, it.v, it.t, it.gone = c, q.seq, l.v, t, false
	t.items = append(t.items, it)
	t.live++
	l.live++
	q.live++
	if t.live == 1 {
		t.head = len(t.items) - 1
		t.tag = finish(it, t.f)
		t.idx = len(l.heap)
		l.heap = append(l.heap, t)
		l.up(t.idx)
	}
}

// finish returns it's virtual finish as the head of a tenant whose last
// caller served finished at f.
func finish[T any](it *Item[T], f float64) float64 {
	return max(it.v, f) + it.c.step()
}

// laneFor returns the lane of priority p, made if there is none.
func (q *Queue[T]) laneFor(p int) *lane[T] {
	i := 0
	for i < len(q.lanes) && q.lanes[i].prio > p {
		i++
	}
	if i < len(q.lanes) && q.lanes[i].prio == p {
		return q.lanes[i]
	}
	l := q.spare
	if l == nil {
		l = &lane[T]{tenants: make(map[string]*tenant[T])}
	}
	q.spare = nil
	l.prio = p
	q.lanes = slices.Insert(q.lanes, i, l)
	return l
}

// Peek returns the caller that goes next, or nil if none waits.
func (q *Queue[T]) Peek() *Item[T] {
	if len(q.lanes) == 0 {
		return nil
	}
	t := q.lanes[0].heap[0]
	return t.items[t.head]
}

// Pop removes the caller Peek returns, as served: its finish becomes its
// tenant's last finish, and its priority's virtual time if above it. The queue must not
// be empty.
func (q *Queue[T]) Pop() *Item[T] {
	l := q.lanes[0]
	t := l.heap[0]
	it := t.items[t.head]
	l.v, t.f = max(l.v, t.tag), t.tag
	q.drop(t)
	return it
}

// Remove withdraws it, which must be waiting in q: no finish changes.
func (q *Queue[T]) Remove(it *Item[T]) {
	t := it.t
	if t.items[t.head] == it {
		q.drop(t)
		return
	}
	if last := len(t.items) - 1; t.items[last] == it {
		t.items[last] = nil // the newest of t: nothing to skip later
		t.items = t.items[:last]
		it.t = nil
	} else {
		it.gone, it.t = true, nil
	}
	t.live--
	t.l.live--
	q.live--
}

// drop removes t's head, served or withdrawn, and gives t's next caller
// its finish (or forgets t and, if it was its lane's last, the lane).
func (q *Queue[T]) drop(t *tenant[T]) {
	l := t.l
	t.items[t.head].t = nil
	t.items[t.head] = nil
	t.head++
	t.live--
	l.live--
	q.live--
	if t.live == 0 {
		l.remove(t.idx)
		delete(l.tenants, t.key)
		if l.live == 0 {
			q.dropLane(l)
		}
		return
	}
	for t.items[t.head].gone {
		t.items[t.head] = nil
		t.head++
	}
	if t.head > 32 && t.head*2 > len(t.items) {
		n := copy(t.items, t.items[t.head:])
		clear(t.items[n:])
		t.items, t.head = t.items[:n], 0
	}
	t.tag = finish(t.items[t.head], t.f)
	l.fix(t.idx)
}

// dropLane removes l, which has no caller left, and keeps it for reuse
// with its virtual time started over.
func (q *Queue[T]) dropLane(l *lane[T]) {
	i := slices.Index(q.lanes, l)
	q.lanes = slices.Delete(q.lanes, i, i+1)
	l.v = 0
	l.heap = l.heap[:0]
	q.spare = l
}

// Leads reports whether a caller c arriving now would go before every
// caller waiting: nobody of a higher priority waits, nor anybody of its
// tenant and priority, and its finish is below that of every other
// tenant's next caller of its priority (at a tie, the earlier arrival goes
// first).
func (q *Queue[T]) Leads(c Caller) bool {
	c = c.norm()
	if len(q.lanes) == 0 || q.lanes[0].prio < c.Prio {
		return true
	}
	l := q.lanes[0] // the highest priority waiting
	return l.prio == c.Prio && l.tenants[c.Tenant] == nil && l.v+c.step() < l.heap[0].tag
}

// Admit records the service of a caller c that went at once (Leads was
// true) while others wait: its finish becomes its priority's virtual time.
func (q *Queue[T]) Admit(c Caller) {
	c = c.norm()
	for _, l := range q.lanes {
		if l.prio == c.Prio {
			l.v += c.step()
			return
		}
	}
}
