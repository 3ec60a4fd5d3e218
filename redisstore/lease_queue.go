package redisstore

import (
	"github.com/benbjohnson/clock"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// The kinds of the pool's waiters (front.Waiter.Kind), bits.
const (
	leaseHold    uint8 = 1 << iota // an Acquire's: its token is held until its release
	leaseNormal                    // on the normal path, in its place in the order until its departure there
	leaseCharged                   // its tenant was charged already: it leaves the order charging nothing (directLocked)
)

// kindOf returns the kind of a caller waiting for a lease (held: Acquire).
func kindOf(hold bool) uint8 {
	if hold {
		return leaseHold
	}
	return 0
}

// waiters are this process's callers of the pool in the one order they go
// in, which internal/fairq decides as for every limiter (SPEC.md,
// "Priorities" and "Fair shares"): the highest priority first
// (rxthrottle.WithPriority), then the tenant of the smallest virtual
// finish (rxthrottle.WithTenant), then arrival. They are the waiters of an
// internal/admission front whose planner is the pool (leasePlanner): the
// callers waiting for a lease, and those the pool sent to the normal path
// (kind leaseNormal, which the front never grants), since a caller keeps
// its place until its departure comes, which charges its tenant (served
// from a lease: Dispatch, handOutLocked; on the normal path: Serve,
// normalDoneLocked), as the normal path's own fair queue does (fair.go).
// So the pool charges a caller where the normal path does, and the order
// of its waiters behind the normal path is the one SPEC.md gives (it
// charged a caller when it sent it there: a later caller of another
// tenant then went after it, whose finish was below). The pool's lock
// guards it.
type waiters struct {
	front front.Front
	p     *leasePool // the planner, which counts the front's waiters on the normal path (normal)
}

// len returns the number of callers waiting for a lease.
func (ws *waiters) len() int { return ws.front.Waiting() - ws.p.normal }

// forLease reports whether w, a waiter of the pool, waits for a lease.
func forLease(w *front.Waiter) bool {
	return w.State == front.Waiting && w.Kind&leaseNormal == 0
}

// first returns the caller waiting for a lease that goes next, or nil.
func (ws *waiters) first() *front.Waiter {
	if ws.len() == 0 {
		return nil
	}
	if w := ws.front.Next(); forLease(w) {
		return w
	}
	// A caller on the normal path goes first: rare (see followLocked),
	// and then O(n).
	for _, w := range ws.front.All() {
		if forLease(w) {
			return w
		}
	}
	return nil
}

// leave takes w out of the order, if it is there: served (its departure
// came on the normal path: its tenant is charged) or withdrawn, as if it
// had never arrived (it gave up, was refused, or waited for a lease until
// its context ended).
func (ws *waiters) leave(w *front.Waiter, served bool) {
	switch {
	case w.State != front.Waiting:
	case served && w.Kind&leaseNormal != 0:
		ws.front.Serve(ws.p.planner(), w)
	default:
		ws.front.Cancel(ws.p.planner(), w)
	}
}

// ahead returns, in their order, the callers waiting for a lease that the
// order puts before one of the front's callers on the normal path: they
// may not wait behind it (followLocked). The callers in arrival order
// (one priority and one tenant: Front.FIFO) cost no walk: a caller that
// comes is last. (One sent to the normal path at its arrival, AcquireN,
// is then after the waiters that came before it, which stay in the pool
// behind it, as they did: sent there, they would reach the normal path's
// order after it, as their goroutines run.)
func (ws *waiters) ahead() []*front.Waiter {
	if ws.p.normal == 0 || ws.len() == 0 || ws.front.FIFO() {
		return nil
	}
	order := ws.front.All()
	last := -1
	for i, w := range order {
		if w.Kind&leaseNormal != 0 {
			last = i
		}
	}
	var out []*front.Waiter
	for _, w := range order[:max(last, 0)] {
		if forLease(w) {
			out = append(out, w)
		}
	}
	return out
}

// handOutLocked hands the tokens of the pool to the waiting callers in
// order (the front's Dispatch), and reports whether it served them all
// (false: the first caller left needs more than the pool has). It
// requires that no caller of the pool is on the normal path.
func (p *leasePool) handOutLocked() bool {
	p.waiters.front.Dispatch(p.planner(), 0)
	return p.waiters.len() == 0
}

// takeGrantedLocked returns the tokens the front granted w (Grant), which
// its caller takes.
func (p *leasePool) takeGrantedLocked(w *front.Waiter) []leasedToken {
	toks := p.granted[w]
	delete(p.granted, w)
	return toks
}

// leasePlanner is the pool as its front's planner: a caller may go when
// the pool's tokens cover its cost. Instants mean nothing to it (the
// pool's are on two clocks, lease.stamp): the pool dispatches at 0, and a
// caller's tokens are free at any instant or Never. Its methods require
// the pool's lock.
type leasePlanner leasePool

var _ front.Planner = (*leasePlanner)(nil)

// planner returns p as its front's planner.
func (p *leasePool) planner() *leasePlanner { return (*leasePlanner)(p) }

// FreeAt returns any instant (Unknown) if the pool has n tokens, else
// Never while a lease is asked for (its grant dispatches); Never for a
// caller on the normal path, which goes there (its departure dispatches:
// normalDoneLocked).
func (p *leasePlanner) FreeAt(n int, kind uint8) int64 {
	if kind&leaseNormal != 0 || len(p.avail) < n {
		return front.Never
	}
	return front.Unknown
}

// NextChange is Never: only a lease's grant or a departure on the normal
// path frees tokens for the front, so its timer is never armed.
func (p *leasePlanner) NextChange() int64 { return front.Never }

// Grant hands w the pool's first w.N tokens, for its caller to take
// (takeGrantedLocked).
func (p *leasePlanner) Grant(w *front.Waiter, _ int64) {
	if p.granted == nil {
		p.granted = map[*front.Waiter][]leasedToken{}
	}
	p.granted[w] = append([]leasedToken(nil), p.avail[:w.N]...)
	p.avail = p.avail[w.N:]
}

// Unservable is nil: a caller no lease can serve goes the normal path.
func (p *leasePlanner) Unservable(*front.Waiter) error { return nil }

// Earliest is Unknown: deadlines are Redis's to judge (lease_probe.go).
func (p *leasePlanner) Earliest(int64, int) int64 { return front.Unknown }

// Left counts w off the normal path if it was there; the schedule's
// counters count the callers.
func (p *leasePlanner) Left(w *front.Waiter, _ bool) {
	if w.Kind&leaseNormal != 0 {
		p.normal--
	}
}

// Clock is nil: the timer is never armed (NextChange).
func (p *leasePlanner) Clock() clock.Clock { return nil }

// Wake does nothing: the timer is never armed.
func (p *leasePlanner) Wake() {}
