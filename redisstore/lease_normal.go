package redisstore

import (
	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// The pool's callers on the normal path. They and the pool's waiters are
// one order (waiters, lease_queue.go): the pool's waiters wait behind the
// callers there, and a caller there reaches Redis a round trip or two
// after its arrival, so no lease is asked for while one is there (a
// later caller could otherwise get a token first). A caller the order
// puts before one of them may therefore not wait in the pool: it goes
// there too (followLocked), where the normal path's own order (fair.go,
// departures.go, line.go) gives it the departure or the turn of the one
// behind it, as the in-memory limiters' waiters would. (The pool used to
// do so by priority only, and charged a caller's tenant when it sent it
// there: a later caller of another tenant whose finish was below stayed
// in the pool behind it.)

// directLocked sends a caller c of n tokens (held: Acquire) that serve
// does not serve from a lease (AcquireN, a pause, a closed pool) to the
// normal path, in its place in the order: the pool's waiters the order
// puts before it go there too, but for those of its tenant and priority
// (see waiters.ahead). It returns what serve returns for it. With
// leaseCharged, it is a caller whose tokens came past their handout: its
// tenant was charged as they were handed to it (handOutLocked), so it is
// back in the order for its place only, which it leaves at its departure
// charging nothing, its place that of a caller arriving now (the pool's
// waiters that the order then puts before it go there too, as
// waiters.ahead says: a lease answered late is rare).
func (p *leasePool) directLocked(c fairq.Caller, n int, hold bool, charged uint8) (rxthrottle.Token, bool, *front.Waiter, error) {
	w := &front.Waiter{N: n, Kind: kindOf(hold) | charged, Who: c}
	p.waiters.front.Push(w)
	p.toNormalLocked(w)
	p.followLocked()
	return rxthrottle.Token{}, false, w, nil
}

// toNormalLocked marks w, a waiter of the pool's front, as on the normal
// path, and counts it there until it leaves the front (leasePlanner.Left).
func (p *leasePool) toNormalLocked(w *front.Waiter) {
	w.Kind |= leaseNormal
	p.normal++
	p.kickLocked() // the probes of the waiters behind it (lease_probe.go)
}

// sendLocked sends w, which waits in the pool, to the normal path, in its
// place in the order.
func (p *leasePool) sendLocked(w *front.Waiter) {
	p.toNormalLocked(w)
	close(w.Ready)
}

// followLocked sends the pool's waiters that the order puts before one of
// its callers on the normal path there, in their order (see above).
func (p *leasePool) followLocked() {
	for _, w := range p.waiters.ahead() {
		p.sendLocked(w)
	}
}

// withdrawLocked takes w, which waits in the pool, out of the order, as if
// it had never arrived: a waiter behind it may now go before a caller on
// the normal path.
func (p *leasePool) withdrawLocked(w *front.Waiter) {
	p.waiters.front.Cancel(p.planner(), w)
	p.followLocked()
	p.handOutFreedLocked()
}

// handOutFreedLocked hands the tokens in the pool to the callers waiting
// for a lease, in order, after one left the pool (it gave up, or gave back
// the tokens handed to it): a caller of a larger cost that gave up held
// those behind it, whose cost the pool covers, until the next lease came
// (SPEC.md, "Weights": they are scheduled as if it had never arrived).
// Not while a caller is on the normal path: the waiters wait behind it.
// The pool's tokens are leased already, so Redis's count is unchanged,
// and those that are left still wait for the lease in flight (a caller
// waits in the pool only while one is asked for: the worker asks again
// for what they still need, wantLocked).
func (p *leasePool) handOutFreedLocked() {
	if p.normal == 0 && len(p.avail) > 0 && p.waiters.len() > 0 {
		p.handOutLocked()
	}
}

// normalDone follows the normal path of a caller that take did not serve:
// w, its place in the order (nil if it had none), and err, what the
// normal path returned.
func (p *leasePool) normalDone(w *front.Waiter, err error) {
	if w == nil {
		return // refused at once there: it kept nobody waiting
	}
	p.mu.Lock()
	p.normalDoneLocked(w, err)
	p.mu.Unlock()
}

// normalDoneLocked takes w off the normal path; it leaves the order,
// served (its tenant is charged: its departure came) if err is nil, else
// as if it had never arrived. After the last one, the callers waiting in
// the pool get the tokens it has, in order, and the pool leases again for
// the others (wantLocked).
func (p *leasePool) normalDoneLocked(w *front.Waiter, err error) {
	p.waiters.leave(w, err == nil && w.Kind&leaseCharged == 0)
	switch {
	case p.normal > 0:
		p.followLocked()
	case p.waiters.len() > 0:
		p.handOutLocked()
		p.kickLocked()
	}
}

// fallHeadLocked sends the first waiting caller to the normal path (see
// take).
func (p *leasePool) fallHeadLocked() {
	if w := p.waiters.first(); w != nil {
		p.sendLocked(w)
	}
}

// fallBackLocked sends every waiting caller to the normal path, in their
// order.
func (p *leasePool) fallBackLocked() {
	if p.waiters.len() == 0 {
		return
	}
	for _, w := range p.waiters.front.All() {
		if forLease(w) {
			p.sendLocked(w)
		}
	}
}
