package redisstore

import "github.com/rxthrottle/rxthrottle/internal/fairq"

// waiters are the callers of this process waiting for a lease, in the
// order they go, which internal/fairq decides as for every limiter
// (SPEC.md, "Priorities" and "Fair shares"): the highest priority first
// (rxthrottle.WithPriority), then the tenant of the smallest virtual
// finish (rxthrottle.WithTenant), then arrival. Leased tokens go to them
// in that order, and so does the first caller a lease cannot serve to the
// normal path. The zero waiters is empty; the pool's lock guards it.
type waiters struct {
	q      fairq.Queue[*leaseWaiter]
	demand int // the tokens they ask for, together
}

// len returns the number of callers waiting.
func (ws *waiters) len() int { return ws.q.Len() }

// push queues w, a caller c arriving now, at its place.
func (ws *waiters) push(w *leaseWaiter, c fairq.Caller) {
	w.item.Value, w.queued = w, true
	ws.q.Push(&w.item, c)
	ws.demand += w.n
}

// peek returns the caller that goes next, or nil.
func (ws *waiters) peek() *leaseWaiter {
	if it := ws.q.Peek(); it != nil {
		return it.Value
	}
	return nil
}

// pop removes the caller that goes next, as served, and returns it (nil
// if none waits).
func (ws *waiters) pop() *leaseWaiter {
	if ws.q.Len() == 0 {
		return nil
	}
	w := ws.q.Pop().Value
	w.queued = false
	ws.demand -= w.n
	return w
}

// remove withdraws w, which waits, as if it had never arrived.
func (ws *waiters) remove(w *leaseWaiter) {
	ws.q.Remove(&w.item)
	w.queued = false
	ws.demand -= w.n
}

// handOutLocked hands the tokens of the pool to the waiting callers in
// order, and reports whether it served them all (false: the first caller
// left needs more than the pool has).
func (p *leasePool) handOutLocked() bool {
	for w := p.waiters.peek(); w != nil; w = p.waiters.peek() {
		if len(p.avail) < w.n {
			return false
		}
		p.waiters.pop()
		w.toks = append([]leasedToken(nil), p.avail[:w.n]...)
		p.avail = p.avail[w.n:]
		close(w.ch)
	}
	return true
}
