package redisstore

import (
	"context"
	"slices"
	"time"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// take admits a caller of n tokens (held: Acquire) from the pool, waiting
// for a lease if the pool is empty. served false: the caller takes the
// normal path (no lease to be had, a nil or ended context, a bad cost,
// AcquireN) and calls done with what it returned there (done is nil for
// a caller refused at once, which the pool never counted). A caller sent to
// the normal path is counted there under the same lock as the decision,
// in its place in the pool's order (lease_normal.go): while any caller of
// this process is there, the pool leases nothing, and a caller arriving
// waits in the pool behind it, unless the order (priority, then the
// tenants' shares, then arrival) puts it first: it goes there too, where
// it takes the departure or turn of the one behind it. The pool leases
// again once the last is done. (Callers that followed one another onto
// the normal path whatever their order kept the pool from leasing for as
// long as one of them was there, which goroutines in a loop made forever
// after a single one went: a Pause, a lease answered past its handout.
// Only a caller the order puts before one there follows them now.)
func (p *leasePool) take(ctx context.Context, n int, hold bool) (tok rxthrottle.Token, served bool, done func(error), err error) {
	tok, served, w, err := p.serve(ctx, n, hold)
	if served {
		return tok, true, nil, err
	}
	if w == nil {
		return tok, false, nil, err
	}
	// A SetLimit that lowered the smallest N below its cost since it came
	// ends its wait on the normal path, counted as cancelled (take, sent).
	return tok, false, func(err error) { p.normalDone(w, err) }, err
}

// serve is take, but for done: a caller it does not serve (served false)
// has w, its place in the order (nil if none: one refused at once there,
// which reaches no Redis and so keeps nobody behind it).
func (p *leasePool) serve(ctx context.Context, n int, hold bool) (tok rxthrottle.Token, served bool, w *front.Waiter, err error) {
	s := p.s
	if ctx == nil || ctx.Err() != nil || s.lim.Load().checkCost("", n) != nil {
		return rxthrottle.Token{}, false, nil, nil
	}
	if hold && n > 1 {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.flushLocked()
		return p.directLocked(callerOf(ctx, n), n, hold, 0)
	}
	arrived := s.clock.Now()
	p.mu.Lock()
	if !p.usableLocked() {
		defer p.mu.Unlock()
		return p.directLocked(callerOf(ctx, n), n, hold, 0)
	}
	// WithMaxQueue: a caller that waits behind callers on the normal path
	// (see take) waits for a token; the callers waiting here count, with
	// those of this process waiting on the normal path, and past the bound
	// it is refused, before one the order puts first follows them there
	// (whose bound there counts only those). (One that waits only for a
	// lease in flight goes as the lease allows.)
	if q := s.queueBound; q >= 0 && p.normal > 0 && p.waiters.len()+s.group.waitingOn(p.keys[0]) >= q {
		p.mu.Unlock()
		s.stats.refuse()
		return rxthrottle.Token{}, true, nil, refuse.QueueFull(takeOp(n, hold), q)
	}
	if p.waiters.len() == 0 && p.normal == 0 {
		if toks := p.popLocked(n, time.Now()); toks != nil {
			tok = p.useLocked(toks, hold, time.Now())
			p.mu.Unlock()
			s.admitted("", arrived, n, s.clock.Since(arrived), false)
			return tok, true, nil, nil
		}
	}
	return p.awaitLocked(ctx, callerOf(ctx, n), n, hold, arrived)
}

// awaitLocked queues a caller c of n tokens of serve that found no token
// in the pool (arrived at arrived), unlocks p.mu, and waits for a lease
// that serves it or for its context to end; one the order puts before a
// caller on the normal path goes there at once, and a lease that came too
// late for its handout is given back, and the caller takes the normal
// path.
func (p *leasePool) awaitLocked(ctx context.Context, c fairq.Caller, n int, hold bool, arrived time.Time) (tok rxthrottle.Token, served bool, _ *front.Waiter, err error) {
	s := p.s
	w := front.NewWaiter(0, n, kindOf(hold), c)
	p.waiters.front.Push(w)
	p.followLocked()
	p.datedLocked(w, deadlineOf(ctx.Deadline()))
	p.low = true
	p.kickLocked()
	p.mu.Unlock()

	s.stats.enter()
	defer s.stats.leave()
	select {
	case <-w.Ready:
	case <-ctx.Done():
		p.mu.Lock()
		p.gaveUpLocked(w, ctx.Err())
		p.mu.Unlock()
		s.stats.cancel()
		return rxthrottle.Token{}, true, nil, ctx.Err()
	}
	p.mu.Lock()
	switch {
	case w.Kind&leaseNormal != 0:
		p.mu.Unlock()
		return rxthrottle.Token{}, false, w, nil // counted by sendLocked
	case w.State == front.Failed:
		p.mu.Unlock()
		s.stats.cancel()
		return rxthrottle.Token{}, true, nil, w.Err
	}
	toks := p.takeGrantedLocked(w)
	now := time.Now()
	if now.After(toks[0].l.handout) || now.After(toks[len(toks)-1].l.handout) {
		defer p.mu.Unlock()
		p.giveBackLocked(toks)
		return p.directLocked(c, n, hold, leaseCharged)
	}
	tok = p.useLocked(toks, hold, now)
	p.mu.Unlock()
	s.admitted("", arrived, n, s.clock.Since(arrived), false)
	return tok, true, nil, nil
}

// gaveUpLocked takes w, a waiter of awaitLocked whose context ended with
// err, out of the pool, wherever it stands. Tokens handed to it meanwhile
// go back to the pool, first (nothing is lost), and to the callers behind
// it (handOutFreedLocked).
func (p *leasePool) gaveUpLocked(w *front.Waiter, err error) {
	switch {
	case w.State == front.Granted:
		p.avail = append(p.takeGrantedLocked(w), p.avail...)
		p.handOutFreedLocked()
		p.armLocked()
	case w.State != front.Waiting: // refused meanwhile (lease_probe.go)
	case w.Kind&leaseNormal != 0: // sent to the normal path meanwhile, and not going
		p.normalDoneLocked(w, err)
	default:
		p.withdrawLocked(w)
	}
}

// allow admits a caller of Allow of n tokens from the pool if it has them
// now; otherwise (served false) the caller takes the normal path, and the
// pool asks for a lease for the next callers.
func (p *leasePool) allow(ctx context.Context, n int) (served bool) {
	s := p.s
	if ctx == nil || ctx.Err() != nil || s.lim.Load().checkCost("", n) != nil {
		return false
	}
	p.mu.Lock()
	if !p.usableLocked() || p.waiters.len() > 0 {
		p.mu.Unlock()
		return false
	}
	toks := p.popLocked(n, time.Now())
	if toks == nil {
		// No lease for Allow: one in flight would take the token it
		// could have had.
		p.mu.Unlock()
		return false
	}
	p.useLocked(toks, false, time.Now())
	p.mu.Unlock()
	s.admitted("", time.Time{}, n, 0, false)
	return true
}

// usableLocked reports whether callers may be served from leases now.
func (p *leasePool) usableLocked() bool {
	return !p.closed && (p.paused.IsZero() || !p.s.clock.Now().Before(p.paused))
}

// popLocked takes n tokens from the pool, or none (nil) if it has fewer
// that may still be handed out at now; tokens past their handout are
// given back.
func (p *leasePool) popLocked(n int, now time.Time) []leasedToken {
	k := 0
	for k < len(p.avail) && now.After(p.avail[k].l.handout) {
		k++
	}
	if k > 0 {
		p.giveBackLocked(p.avail[:k])
		p.avail = slices.Delete(p.avail, 0, k)
	}
	if len(p.avail) < n {
		return nil
	}
	toks := slices.Clone(p.avail[:n])
	p.avail = slices.Delete(p.avail, 0, n)
	if len(p.avail) <= p.block/2 {
		p.low = true
		p.kickLocked() // the next lease before the pool runs dry
	}
	return toks
}

// useLocked records the use of toks at now (a Wait's), or returns the
// Token of a caller of Acquire (one token) that records it at its release.
func (p *leasePool) useLocked(toks []leasedToken, hold bool, now time.Time) rxthrottle.Token {
	p.took = now
	p.leased.Add(1)
	if hold {
		return newLeaseToken(p, toks[0])
	}
	for _, t := range toks {
		p.entryLocked(t, t.l.stamp(now), 0)
		if p.used != nil {
			p.used(t.l.id, t.l.d, t.j, t.l.earliest(now))
		}
	}
	return rxthrottle.Token{}
}

// giveBackLocked reports toks as given back unused.
func (p *leasePool) giveBackLocked(toks []leasedToken) {
	for _, t := range toks {
		p.entryLocked(t, -1, 0)
	}
}

// entryLocked adds token t to its lease's report: used at offset u from
// the grant with x tokens of debt, or given back (u = -1). A token next to
// the last run, and used within the pool's gap of that run's first stamp
// (or given back with it), joins the run: the run completes at its latest
// stamp, never earlier than any of its tokens, so the window only gets
// stricter, by at most the gap, and Redis has fewer members to read.
func (p *leasePool) entryLocked(t leasedToken, u int64, x int) {
	l := t.l
	if k := len(l.runs) - 1; k >= 0 {
		r := &l.runs[k]
		if r.j+r.n == t.j && x == 0 && r.x == 0 && (u < 0) == (r.u < 0) && (u < 0 || u-r.u0 <= p.gap) {
			r.n++
			r.u = max(r.u, u)
			r.u0 = min(r.u0, u)
			return
		}
	}
	l.runs = append(l.runs, leaseRun{j: t.j, n: 1, x: x, u: u, u0: u})
	if !l.queued {
		l.queued = true
		p.reports = append(p.reports, l)
	}
	p.armLocked()
}
