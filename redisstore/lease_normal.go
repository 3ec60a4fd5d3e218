package redisstore

import (
	"context"
	"slices"

	"github.com/rxthrottle/rxthrottle"
)

// onNormal is the priorities of this process's callers that the pool sent
// to the normal path and that are not done there: a multiset, in
// ascending order. The pool's lock guards it.
type onNormal struct{ prios []int }

// len returns the number of callers on the normal path.
func (o *onNormal) len() int { return len(o.prios) }

// lowest returns the lowest priority on the normal path; it requires that
// a caller is there.
func (o *onNormal) lowest() int { return o.prios[0] }

// add counts a caller of priority prio.
func (o *onNormal) add(prio int) {
	i, _ := slices.BinarySearch(o.prios, prio)
	o.prios = slices.Insert(o.prios, i, prio)
}

// remove counts off a caller of priority prio, which add counted.
func (o *onNormal) remove(prio int) {
	if i, ok := slices.BinarySearch(o.prios, prio); ok {
		o.prios = slices.Delete(o.prios, i, i+1)
	}
}

// priorityOf is the priority take counts a caller of ctx under (0 for a
// nil context, which the normal path refuses).
func priorityOf(ctx context.Context) int {
	if ctx == nil {
		return 0
	}
	return rxthrottle.PriorityFrom(ctx)
}

// toNormalLocked counts a caller of priority prio that take sends to the
// normal path (see countNormalLocked).
func (p *leasePool) toNormalLocked(prio int) (rxthrottle.Token, bool, error) {
	p.countNormalLocked(prio)
	return rxthrottle.Token{}, false, nil
}

// countNormalLocked counts a caller of priority prio on the normal path,
// and sends the pool's waiters of a higher priority there after it, in
// their order: the pool's waiters wait behind the callers on the normal
// path, which only a caller there can overtake (a caller of higher
// priority takes the departure or the turn of a lower one there: see the
// package doc, "Priorities"). So every caller waiting in the pool has a
// priority no higher than any of this process's callers on the normal
// path (serve keeps it so for those that arrive).
func (p *leasePool) countNormalLocked(prio int) {
	p.normal.add(prio)
	for w := p.waiters.peek(); w != nil && w.prio > prio; w = p.waiters.peek() {
		p.fallHeadLocked()
	}
	p.kickLocked() // the probes of the waiters behind it (lease_probe.go)
}

// normalDone follows the normal path of a caller of priority prio that
// take did not serve.
func (p *leasePool) normalDone(prio int) {
	p.mu.Lock()
	p.normalDoneLocked(prio)
	p.mu.Unlock()
}

// normalDoneLocked counts a caller of priority prio off the normal path;
// after the last one, the callers waiting in the pool get the tokens it
// has, in order, and the pool leases again for the others (wantLocked).
func (p *leasePool) normalDoneLocked(prio int) {
	p.normal.remove(prio)
	if p.normal.len() == 0 && p.waiters.len() > 0 {
		p.handOutLocked()
		p.kickLocked()
	}
}

// fallHeadLocked sends the first waiting caller to the normal path,
// counted there at once (see take).
func (p *leasePool) fallHeadLocked() {
	if w := p.waiters.pop(); w != nil {
		w.fallback = true
		p.countNormalLocked(w.prio) // the first has the highest priority: nobody follows it
		close(w.ch)
	}
}

// fallBackLocked sends every waiting caller to the normal path, in their
// order, counted there at once (see take).
func (p *leasePool) fallBackLocked() {
	for p.waiters.len() > 0 {
		p.fallHeadLocked()
	}
}
