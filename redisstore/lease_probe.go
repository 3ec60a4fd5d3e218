package redisstore

import (
	"slices"
	"time"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// A caller with a deadline that waits in the pool behind this process's
// callers on the normal path (see take) has its deadline decided as on
// the normal path (SPEC.md, "Deadlines"): the worker sends a probe for it
// (request.probe), the deadline's check of an admission that reserves
// nothing, and a caller whose deadline is no later than the earliest
// instant it could possibly go, as Redis computes it, is refused with an
// error wrapping rxthrottle.ErrDeadline, having taken nothing. One that
// could go by it waits in the pool as before. (It waited until its
// context ended: the deadline was not decided behind the pool's head.)
// Probed only behind the normal path: a caller waiting for a lease in
// flight has its answer in the same round trip as a probe's.

// datedWaiter is a waiter of the pool with a deadline, not probed yet.
type datedWaiter struct {
	w        *front.Waiter
	deadline time.Time
}

// datedLocked records w, which waits in the pool, if its context has a
// deadline: its probe is sent while callers of this process are on the
// normal path.
func (p *leasePool) datedLocked(w *front.Waiter, deadline time.Time) {
	if deadline.IsZero() {
		return
	}
	if len(p.dated) > 2*p.waiters.len()+16 {
		// Those that left meanwhile (served, withdrawn): at most as many
		// as the waiters are left, so the pruning costs each arrival O(1).
		p.pruneDatedLocked()
	}
	p.dated = append(p.dated, datedWaiter{w, deadline})
}

// pruneDatedLocked forgets the dated waiters that no longer wait for a
// lease.
func (p *leasePool) pruneDatedLocked() {
	p.dated = slices.DeleteFunc(p.dated, func(d datedWaiter) bool { return !forLease(d.w) })
}

// probeDueLocked reports whether a waiter is to be probed: one with a
// deadline, not probed yet, while a caller is on the normal path.
func (p *leasePool) probeDueLocked() bool {
	if p.normal == 0 {
		return false
	}
	p.pruneDatedLocked()
	return len(p.dated) > 0
}

// addProbesLocked appends to reqs the probes of the waiters due (see
// probeDueLocked), and returns them with the waiters, in the same order.
func (p *leasePool) addProbesLocked(reqs []request) ([]request, []*front.Waiter) {
	if !p.probeDueLocked() {
		return reqs, nil
	}
	ws := make([]*front.Waiter, 0, len(p.dated))
	for _, d := range p.dated {
		ws = append(ws, d.w)
		reqs = append(reqs, request{probe: true, n: d.w.N, hold: d.w.Kind&leaseHold != 0, deadline: d.deadline})
	}
	clear(p.dated)
	p.dated = p.dated[:0]
	return reqs, ws
}

// probedLocked acts on the answers of the probes of ws, the last len(ws)
// answers of a call but for its lease's (leasing): a waiter refused that
// still waits leaves the pool, as if it had never arrived, with its
// error (Front.Fail).
func (p *leasePool) probedLocked(ws []*front.Waiter, out []admission, leasing bool) {
	if len(ws) == 0 {
		return
	}
	end := len(out)
	if leasing {
		end--
	}
	for i, a := range out[end-len(ws) : end] {
		if w := ws[i]; a.refused && forLease(w) {
			p.waiters.front.Fail(p.planner(), w, refuse.Deadline(takeOp(w.N, w.Kind&leaseHold != 0), -1, a.delay()))
			p.followLocked()
		}
	}
}

// deadlineOf returns the deadline of a caller's context, zero if none.
func deadlineOf(dl time.Time, ok bool) time.Time {
	if !ok {
		return time.Time{}
	}
	return dl
}
