package redisstore

import (
	"context"
	"math"
	"time"
)

// run sends batch as one script run and hands the answers over. An
// admission whose caller is gone (abandoned, or its context ended as the
// answer came) or that its caller could not use before its deadline is
// withdrawn at once: run sends the withdrawals, with the queue behind
// them, before it makes the first caller of the queue the next leader.
// bound, if not 0, bounds each script run.
func (s *schedule) run(keys []string, f *flight, batch []*pending, bound time.Duration) {
	g := &s.group
	for {
		reqs, out := make([]request, len(batch)), make([]admission, len(batch))
		for i, p := range batch {
			reqs[i] = p.req
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if bound > 0 {
			ctx, cancel = context.WithTimeout(ctx, bound)
		}
		err := s.runBatch(ctx, keys, reqs, out)
		cancel()
		// The answer's instants on the local clocks: the real one for
		// the callers' deadlines (context deadlines are read there), the
		// limiter's for the departures its front grants.
		answered, local := time.Now(), offsetOf(g.clock.Now())

		g.mu.Lock()
		withdraw, again, ours := settleLocked(batch, out, err, answered)
		enc, replan := s.lim.Load().enc, false
		for _, p := range batch {
			if p.again {
				continue
			}
			if p.req.departs && err == nil && p.res.admitted && p.res.e > p.res.now {
				// Its departure is ahead: until then, a caller that goes
				// before it may take its place (departures.go, fair.go).
				p.res.dep = g.departLocked(keys[0], p, departAt(local, p.res.delay()))
				// Planned under limits a SetLimit replaced meanwhile.
				replan = replan || p.res.tier == "" && p.res.ranUnder != enc
			}
			g.fairSettleLocked(keys[0], p, err)
			if p.done != nil {
				close(p.done)
			}
		}
		win := g.windows[keys[0]]
		for _, p := range again {
			g.queueLocked(win, p)
		}
		if replan {
			g.replanLocked(win, enc)
		}
		all := g.fairBumpLocked(win)
		win.dispatchLocked() // arms its timer for the departures given
		next := win.leaderLocked(all)
		if len(withdraw) > 0 || win.queuedLocked() > 0 && next == nil {
			// The withdrawals go first, then the callers scheduled
			// behind them in this batch, in their place in the queue:
			// the next callers are scheduled as if the withdrawn
			// admissions had never been made. (A queue of withdrawals
			// alone, which no caller can lead, goes too.)
			batch = append(withdraw, win.nextBatchLocked(all, max(0, maxBatch-len(withdraw)))...)
			g.mu.Unlock()
			s.endedOurs(keys, ours, err)
			continue
		}
		if next == nil {
			g.landedLocked(keys[0])
		} else {
			// The first caller queued leads the next run, from its place
			// in the queue (the ends queued ahead of it go in it first).
			next.lead = true
			close(next.done)
		}
		// The answers and the lead are handed over under mu: a caller
		// whose context ends meanwhile sees done closed and takes them,
		// rather than give up unseen an admission already made (not
		// withdrawn then) or the lead (the queue behind it would wait
		// forever).
		g.mu.Unlock()
		if g.handedOver != nil {
			g.handedOver()
		}
		s.endedOurs(keys, ours, err)
		return
	}
}

// settleLocked sets the answers of batch, the call's out (or err), and
// picks what goes in the next script run before the queue: the
// withdrawals of the admissions whose callers are gone (abandoned, or
// their context ended as the answer came) or could not use them before
// their deadline, and the admissions scheduled behind one of those, which
// ask again (again, marked so) as if it had never been made. ours says
// whether the batch carried withdrawals of the group's own. Requires
// group.mu.
func settleLocked(batch []*pending, out []admission, err error, answered time.Time) (withdraw, again []*pending, ours bool) {
	tainted := false // an admission of the batch is withdrawn: the later ones were scheduled with it
	for i, p := range batch {
		p.res, p.err, p.again = out[i], err, false
		if p.ctx == nil {
			ours = true
			continue
		}
		a := out[i]
		if err != nil || p.req.how != "" {
			continue
		}
		if tainted && !p.abandoned && p.ctx.Err() == nil {
			// Scheduled behind an admission now withdrawn: it asks
			// again, right after the withdrawals, as if that one had
			// never been made.
			if a.admitted {
				withdraw = append(withdraw, withdrawalOf(p, a))
			}
			p.again = true
			again = append(again, p)
			continue
		}
		if !a.admitted {
			continue
		}
		switch {
		case p.abandoned || p.ctx.Err() != nil:
			p.res = admission{withdrawn: true, now: a.now}
		case !p.req.deadline.IsZero() && answered.Add(a.delay()).After(p.req.deadline):
			p.res = admission{late: true, e: a.e, now: a.now}
		default:
			if !p.req.deadline.IsZero() {
				p.res.at = answered.Add(a.delay())
			}
			continue
		}
		withdraw = append(withdraw, withdrawalOf(p, a))
		tainted = true
	}
	return withdraw, again, ours
}

// withdrawalOf is the withdrawal of the admission a made for p.
// As an end, it goes ahead of every admission (prio): the callers
// after it are scheduled without the admission withdrawn (tail.lua).
func withdrawalOf(p *pending, a admission) *pending {
	return &pending{req: request{tier: a.tier, how: "withdraw", id: a.id, n: p.req.n, e: a.e}, prio: math.MaxInt}
}

// endedOurs follows a script run that carried withdrawals of the group's
// own (if ours): it reports a failure (the tokens then stay reserved,
// which costs tokens but never breaks the window), or wakes this
// process's callers waiting for a token.
func (s *schedule) endedOurs(keys []string, ours bool, err error) {
	switch {
	case !ours:
	case err != nil:
		s.report(&StoreError{Op: "withdraw", Key: keys[0], Err: err})
	default:
		s.wake.notify()
	}
}
