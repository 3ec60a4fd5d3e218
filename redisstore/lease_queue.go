package redisstore

import "github.com/rxthrottle/rxthrottle/internal/fairq"

// waiters are this process's callers of the pool in the one order they go
// in, which internal/fairq decides as for every limiter (SPEC.md,
// "Priorities" and "Fair shares"): the highest priority first
// (rxthrottle.WithPriority), then the tenant of the smallest virtual
// finish (rxthrottle.WithTenant), then arrival. It holds both the callers
// waiting for a lease and those the pool sent to the normal path: a caller
// stays in it until its departure comes, which charges its tenant (served
// from a lease: handOutLocked; on the normal path: normalDoneLocked), as
// the normal path's own fair queue does (fair.go). So the pool charges a
// caller where the normal path does, and the order of its waiters behind
// the normal path is the one SPEC.md gives (it charged a caller when it
// sent it there: a later caller of another tenant then went after it,
// whose finish was below). The zero waiters is empty; the pool's lock
// guards it.
type waiters struct {
	q       fairq.Queue[*leaseWaiter]
	waiting int // the callers waiting for a lease
	demand  int // the tokens they ask for, together
	normal  int // the callers in q on the normal path
}

// len returns the number of callers waiting for a lease.
func (ws *waiters) len() int { return ws.waiting }

// push queues w, a caller c arriving now, at its place, waiting for a
// lease (or, if normal, on the normal path already).
func (ws *waiters) push(w *leaseWaiter, c fairq.Caller, normal bool) {
	w.item.Value = w
	ws.q.Push(&w.item, c)
	if normal {
		w.normal = true
		ws.normal++
		return
	}
	w.queued = true
	ws.waiting++
	ws.demand += w.n
}

// first returns the caller waiting for a lease that goes next, or nil.
func (ws *waiters) first() *leaseWaiter {
	if ws.waiting == 0 {
		return nil
	}
	if w := ws.q.Peek().Value; w.queued {
		return w
	}
	// A caller on the normal path goes first: rare (see followLocked),
	// and then O(n).
	for _, w := range ws.q.All() {
		if w.queued {
			return w
		}
	}
	return nil
}

// pop removes the caller that goes next, as served (a lease's tokens are
// its departure), and returns it; it requires that no caller of the
// queue is on the normal path, and returns nil if none waits.
func (ws *waiters) pop() *leaseWaiter {
	if ws.waiting == 0 {
		return nil
	}
	w := ws.q.Pop().Value
	w.queued = false
	ws.waiting--
	ws.demand -= w.n
	return w
}

// toNormal moves w, which waits for a lease, to the normal path: it keeps
// its place, and is charged at its departure there.
func (ws *waiters) toNormal(w *leaseWaiter) {
	w.queued, w.normal = false, true
	ws.waiting--
	ws.demand -= w.n
	ws.normal++
}

// leave takes w out of the queue: served (its departure came on the
// normal path: its tenant is charged) or withdrawn, as if it had never
// arrived (it gave up, was refused, or waited for a lease until its
// context ended).
func (ws *waiters) leave(w *leaseWaiter, served bool) {
	switch {
	case w.queued:
		ws.q.Remove(&w.item)
		w.queued = false
		ws.waiting--
		ws.demand -= w.n
	case w.normal:
		if served {
			ws.q.Serve(&w.item)
		} else {
			ws.q.Remove(&w.item)
		}
		w.normal = false
		ws.normal--
	}
}

// ahead returns, in their order, the callers waiting for a lease that the
// order puts before one of the queue's callers on the normal path: they
// may not wait behind it (followLocked). The callers in arrival order
// (one priority and one tenant: fairq.FIFO) cost no walk: a caller that
// comes is last. (One sent to the normal path at its arrival, AcquireN,
// is then after the waiters that came before it, which stay in the pool
// behind it, as they did: sent there, they would reach the normal path's
// order after it, as their goroutines run.)
func (ws *waiters) ahead() []*leaseWaiter {
	if ws.normal == 0 || ws.waiting == 0 || ws.q.FIFO() {
		return nil
	}
	order := ws.q.All()
	last := -1
	for i, w := range order {
		if w.normal {
			last = i
		}
	}
	var out []*leaseWaiter
	for _, w := range order[:max(last, 0)] {
		if w.queued {
			out = append(out, w)
		}
	}
	return out
}

// handOutLocked hands the tokens of the pool to the waiting callers in
// order, and reports whether it served them all (false: the first caller
// left needs more than the pool has). It requires that no caller of the
// pool is on the normal path.
func (p *leasePool) handOutLocked() bool {
	for w := p.waiters.first(); w != nil; w = p.waiters.first() {
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
