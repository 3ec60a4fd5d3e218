package redisstore

import (
	"context"
	"strconv"
	"time"
)

// maxReports bounds the leases one call reports (the rest go in the next).
const maxReports = 64

// kickLocked starts the worker if it does not run and has work: callers
// waiting, a pool that runs low, or reports that are due.
func (p *leasePool) kickLocked() {
	if p.busy || !p.hasWorkLocked() {
		return
	}
	p.busy = true
	go p.work()
}

// hasWorkLocked reports whether the worker has a call to make: a lease to
// ask for, or reports that are due (the flush timer ticked, a caller took
// the normal path, or the pool is closed).
func (p *leasePool) hasWorkLocked() bool {
	if p.wantLocked() > 0 || p.probeDueLocked() {
		return true
	}
	return len(p.reports) > 0 && (p.due || p.closed)
}

// flushLocked gives the tokens in the pool back now and sends the reports:
// a caller of this process takes the normal path, which tokens this
// process holds unused would block.
func (p *leasePool) flushLocked() {
	if len(p.avail) == 0 {
		return
	}
	p.giveBackLocked(p.avail)
	p.avail = nil
	p.due = true
	p.kickLocked()
}

// wantLocked is the size of the next lease: the block (or what the
// callers waiting need, if more) less what the pool has, at most max; 0
// when no lease is to be asked for.
func (p *leasePool) wantLocked() int {
	// While a caller of this process is on the normal path, no lease:
	// one could reach Redis before that caller's admission and let the
	// callers behind it (waiting here) overtake it.
	if !p.usableLocked() || p.abandon || p.normal > 0 {
		return 0
	}
	demand := p.waiters.front.Cost() // every waiter waits for a lease: none is on the normal path
	if demand == 0 && !p.low {
		return 0
	}
	return max(min(max(p.block, demand)-len(p.avail), p.max), 0)
}

// armLocked arms the flush timer if anything is left to report or give
// back.
func (p *leasePool) armLocked() {
	if p.timer == nil && (len(p.reports) > 0 || len(p.avail) > 0) {
		p.timer = time.AfterFunc(p.every, p.tick)
	}
}

// idleAfter is how long tokens stay in a pool nobody takes from before
// they go back (and the block halves): two ticks of the flush timer, and
// at least 10ms, so that a process the machine did not run for a moment
// does not give back the block it is about to use.
func (p *leasePool) idleAfter() time.Duration { return max(2*p.every, 10*time.Millisecond) }

// tick is the flush timer: tokens nobody took for idleAfter go back (and
// the block shrinks), and the reports go to Redis unless a call carried
// them within the last tick (a busy pool's leases do).
func (p *leasePool) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	now := time.Now()
	if len(p.avail) > 0 && now.Sub(p.took) >= p.idleAfter() {
		p.giveBackLocked(p.avail)
		p.avail = nil
		p.block = max(1, p.block/2)
	}
	if now.Sub(p.called) >= p.every {
		p.due = true
		p.kickLocked()
	}
	p.armLocked()
}

// work makes the pool's calls to Redis, one at a time, while it has work.
func (p *leasePool) work() {
	p.mu.Lock()
	for p.hasWorkLocked() {
		reqs, probed := p.addProbesLocked(p.takeReportsLocked())
		p.due = false
		want, demand := p.wantLocked(), p.waiters.len() > 0
		if want > 0 {
			reqs = append(reqs, request{how: opLease, n: want, arg: p.holder})
			p.low = false
		}
		p.called = time.Now()
		p.mu.Unlock()
		granted, l, out, err := p.call(reqs, want > 0)
		p.mu.Lock()
		if err == nil {
			p.probedLocked(probed, out, want > 0)
		} else {
			// The normal path applies the failure policy.
			p.abandon = false
			p.fallBackLocked()
			continue
		}
		if p.abandon {
			// The first caller a lease could not serve takes the normal
			// path, now that the tokens left are given back; those
			// behind it wait here until it is done (wantLocked).
			p.abandon = false
			p.fallHeadLocked()
			continue
		}
		if want > 0 {
			p.grantLocked(l, granted, want, demand)
		}
	}
	if p.abandon { // nothing was left to give back
		p.abandon = false
		p.fallHeadLocked()
	}
	p.busy = false
	p.idle.Broadcast()
	p.armLocked()
	p.mu.Unlock()
}

// takeReportsLocked takes the reports of up to maxReports leases.
func (p *leasePool) takeReportsLocked() []request {
	n := min(len(p.reports), maxReports)
	if n == 0 {
		return nil
	}
	leases := p.reports[:n:n]
	p.reports = p.reports[n:]
	reqs := make([]request, 0, n+1)
	now := time.Now()
	var b []byte
	for _, l := range leases {
		b = b[:0]
		for _, r := range l.runs {
			b = strconv.AppendInt(b, int64(r.j), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(r.n), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, r.u, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(r.x), 10)
			b = append(b, ' ')
		}
		reqs = append(reqs, request{how: opReport, id: l.id, e: l.d, arg: string(b)})
		if p.sending != nil {
			p.sending(l.id, l.d, l.earliest(now), string(b))
		}
		l.runs, l.queued = l.runs[:0], false
	}
	return reqs
}

// call sends reqs in one script run (the lease, if asked, last) and
// returns the lease. Reports that fail are lost: their tokens stay held
// in Redis until their lease deadline, which costs tokens but never
// breaks the window. The breaker applies as to any call.
func (p *leasePool) call(reqs []request, leasing bool) (int, *lease, []admission, error) {
	s := p.s
	t := s.brk.begin()
	if !t.call {
		err := &StoreError{Op: "lease", Key: p.keys[0], Err: s.brk.openError()}
		if !leasing {
			s.report(err) // reports lost
		}
		return 0, nil, nil, err
	}
	// A call is bounded even on a client that ignores the deadline on the
	// socket: a caller waiting for the lease goes the normal path after
	// the failure, and Close waits for the call. On a bound that passed,
	// the call goes on (its out is never read): a lease granted then ends
	// at its deadline, and its reports are lost (see above).
	out := make([]admission, len(reqs))
	sent := time.Now()
	err := s.bounded(context.Background(), s.endBound(), func(ctx context.Context) error {
		return s.runBatch(ctx, p.keys, reqs, out)
	})
	if own := ownError(err); own != nil {
		s.brk.succeeded(t) // Redis answered
		return 0, nil, nil, err
	}
	s.ended(t, p.keys[0], "lease", err)
	if err != nil {
		return 0, nil, nil, &StoreError{Op: "lease", Key: p.keys[0], Err: err}
	}
	if len(reqs) > 0 && reqs[0].how == opReport {
		s.wake.notify() // callers of this process blocked by held tokens ask again
	}
	if p.trace != nil {
		for i, r := range reqs {
			if r.how == opReport {
				p.trace(r.id, r.e, out[i].now, r.arg)
			}
		}
	}
	if !leasing {
		return 0, nil, out, nil
	}
	a := out[len(out)-1]
	if !a.admitted {
		return 0, nil, out, nil
	}
	recv := time.Now()
	hold := durationOf(s.lim.Load().hold)
	return a.granted, &lease{id: a.id, d: a.e, sent: sent, recv: recv, handout: sent.Add(min(leaseAge, hold/2))}, out, nil
}

// grantLocked puts the granted tokens of l in the pool, hands them to the
// waiting callers in order, and adapts the block: it doubles when callers
// found the pool empty and the lease was granted in full; a lease granted
// in part (Redis had no more free now) sends the callers it cannot serve
// to the normal path.
func (p *leasePool) grantLocked(l *lease, granted, want int, demand bool) {
	for j := 1; j <= granted; j++ {
		p.avail = append(p.avail, leasedToken{l: l, j: j})
	}
	if demand && granted == want {
		p.block = min(p.block*2, p.max)
	}
	if p.normal > 0 {
		// A caller went to the normal path while the lease was in flight
		// (its tokens came past their handout): the callers here wait
		// behind it, and the tokens, held, could block it.
		p.giveBackLocked(p.avail)
		p.avail = nil
		p.due = true
	} else if !p.handOutLocked() && granted < want {
		// Redis has no more free now: the first caller goes the normal
		// path once the tokens left are back in Redis (held, they would
		// block it, and let a later caller overtake it); the others
		// follow it in their order.
		p.giveBackLocked(p.avail)
		p.avail = nil
		p.due, p.abandon = true, true
	}
	if len(p.avail) == 0 && granted < want {
		p.low = false
	}
	p.armLocked()
}

// close gives back the tokens in the pool and reports every use, bounded
// by the call timeout; later callers take the normal path.
func (p *leasePool) close() error {
	p.mu.Lock()
	p.closed = true
	for p.busy {
		p.idle.Wait()
	}
	// A lease granted while the worker ran is in the pool now.
	p.giveBackLocked(p.avail)
	p.avail = nil
	p.fallBackLocked()
	var err error
	for len(p.reports) > 0 {
		reqs := p.takeReportsLocked()
		p.busy = true
		p.mu.Unlock()
		_, _, _, err = p.call(reqs, false)
		p.mu.Lock()
		p.busy = false
		if err != nil {
			break
		}
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.idle.Broadcast()
	p.mu.Unlock()
	return err
}
