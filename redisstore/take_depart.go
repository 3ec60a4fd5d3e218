package redisstore

import (
	"context"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// commit asks Redis for the caller's admission: through group commit, or,
// if a caller of higher priority took its departure, by the admission
// queued for it behind that caller (departures.go). A run of that one under
// a stale configuration or other limits asks again as any caller does.
func (c *taker) commit() (admission, error) {
	d := c.again
	if d == nil {
		return c.s.commitConf(c.ctx, c.keys, c.key, c.op, &c.req)
	}
	c.again, c.reasked = nil, true
	a, err := c.s.awaitTurn(c.ctx, c.keys, d.f, d.again)
	if err != nil || !a.stale && !a.mismatch {
		return a, err
	}
	return c.s.commitConf(c.ctx, c.keys, c.key, c.op, &c.req)
}

// dropAgain gives up the admission queued for the caller behind a caller
// of higher priority or a SetLimit's re-plan (c.again), which will not ask
// after all (the breaker is open, or the limits no longer serve its cost):
// it is taken out of the queue, or withdrawn once answered.
func (c *taker) dropAgain() {
	d := c.again
	if d == nil {
		return
	}
	c.again = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a, err := c.s.awaitTurn(ctx, c.keys, d.f, d.again)
	if err != nil || !a.admitted {
		return
	}
	if a.dep != nil {
		c.s.group.giveUp(c.keys[0], a.dep)
	}
	c.s.end(c.keys, a.tier, a.id, c.n, a.e, "withdraw")
}

// depart waits until the caller's departure and admits it; if its context
// ends first, its reservation is withdrawn. If a caller of higher priority
// takes its departure first, it asks again (done false).
func (c *taker) depart(a admission) (rxthrottle.Token, bool, error) {
	s := c.s
	if s.trace != nil {
		s.trace(a)
	}
	d := a.delay()
	if d > 0 {
		c.waits()
		if s.sleeping != nil {
			s.sleeping(d)
		}
		switch c.sleepUntil(a) {
		case bumped:
			c.again = a.dep
			return rxthrottle.Token{}, false, nil
		case gaveUp:
			s.end(c.keys, a.tier, a.id, c.n, a.e, "withdraw")
			s.stats.cancel()
			return rxthrottle.Token{}, true, c.ctx.Err()
		case costly:
			s.end(c.keys, a.tier, a.id, c.n, a.e, "withdraw")
			s.stats.cancel()
			return rxthrottle.Token{}, true, s.stillServes(c.op, &c.req)
		}
	}
	s.admitted(c.key, c.arrived, c.n, s.clock.Since(c.arrived), d > 0 || c.blocked || c.gated)
	if !c.hold {
		return rxthrottle.Token{}, true, nil
	}
	c.place.depart()
	c.kept = true
	return limiterkit.NewToken(&heldToken{s: s, keys: c.keys, tier: a.tier, id: a.id, n: c.n, d: a.e, place: c.place}, uint64(a.id)), true, nil
}

// outcome is how a caller's wait for its departure ended.
type outcome uint8

const (
	goes   outcome = iota // its departure came
	gaveUp                // its context ended first: its reservation is to be withdrawn
	bumped                // a caller of higher priority took its departure first
	costly                // the limits in force no longer serve its cost: its reservation is to be withdrawn
)

// sleepUntil waits for the caller's departure a (a.dep: its schedule's
// window grants it, group_planner.go) and says how the wait ended.
//
// A SetLimit that lowers the smallest N below its cost (here, or read
// from another process's) ends the wait (SPEC.md, "Changing limits"): its
// reservation, made under the old limits, would let more than the new N
// depart in a window. One that changes the limits otherwise bumps it
// (replanLocked): it asks again under them. While it sleeps, the
// configuration is read as if it admitted (sleepStart).
func (c *taker) sleepUntil(a admission) outcome {
	dep := a.dep
	ended := c.ctx.Done()
	limits := c.s.limWake.channel()
	c.s.sleepStart() // another process's SetLimit reaches it too
	defer c.s.sleepEnd()
	for {
		if c.s.stillServes(c.op, &c.req) != nil {
			if o := c.s.group.giveUp(c.keys[0], dep); o != gaveUp {
				return o // granted meanwhile, or bumped: it asks again, and fails there
			}
			return costly
		}
		select {
		case <-dep.w.Ready:
			return goes
		case <-dep.bump:
			return bumped
		case <-limits:
			limits = c.s.limWake.channel()
			continue
		case <-ended:
		}
		if dl, ok := c.ctx.Deadline(); ok && !a.at.IsZero() && !a.at.After(dl) && c.ctx.Err() == context.DeadlineExceeded {
			// Its departure, as the answer gave it, was by its deadline:
			// only the timers' order on a busy machine says otherwise. It
			// goes when the window grants its departure (as in SPEC.md's
			// schedule), not before.
			ended = nil
			continue
		}
		return c.s.group.giveUp(c.keys[0], dep)
	}
}
