package redisstore

import (
	"cmp"
	"slices"
)

// departure is a caller of this process whose admission the script has
// given a departure still ahead: it sleeps until then (taker.depart). Until
// it goes it is still waiting, as SPEC.md's callers are until their
// departure: a caller of higher priority that asks for its admission
// meanwhile takes its place (group.bumpLocked). Its fields are guarded by
// group.mu.
type departure struct {
	p *pending  // its admission as it was asked: context, request, priority
	a admission // the answer that gave it its departure
	// bump is closed when a caller of higher priority took its place: its
	// reservation is withdrawn, and it asks again (again, queued in f)
	// in the same script run, right behind that caller.
	bump  chan struct{}
	again *pending
	f     *flight
}

// departLocked records p, whose answer gives it a departure ahead on the
// schedule stored under key, among the departures; requires group.mu.
func (g *group) departLocked(key string, p *pending) *departure {
	d := &departure{p: p, a: p.res, bump: make(chan struct{})}
	if g.departing == nil {
		g.departing = map[string][]*departure{}
	}
	g.departing[key] = append(g.departing[key], d)
	return d
}

// leave takes d out of the departures of key as its caller goes (or gives
// up) and reports whether it may: false if a caller of higher priority took
// its place first, and it is to ask again (d.again).
func (g *group) leave(key string, d *departure) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d.again != nil {
		return false
	}
	ds := g.departing[key]
	if i := slices.Index(ds, d); i >= 0 {
		ds = slices.Delete(ds, i, i+1)
	}
	if len(ds) == 0 {
		delete(g.departing, key)
	} else {
		g.departing[key] = ds
	}
	return true
}

// bumpLocked makes p, an admission of a Wait or Acquire about to join
// flight f of the schedule stored under key, go before the callers of this
// process of a lower priority that have a departure but have not gone
// (SPEC.md, "Priorities": a caller of higher priority goes before the lower
// ones still waiting). Their reservations are withdrawn ahead of p in the
// next script run (ends go first), and they ask again behind it, in their
// order (priority, then arrival): as if p had arrived before them.
// Requires group.mu.
func (g *group) bumpLocked(key string, f *flight, p *pending) {
	ds := g.departing[key]
	var bumped []*departure
	keep := ds[:0]
	for _, d := range ds {
		if d.p.prio < p.prio {
			bumped = append(bumped, d)
		} else {
			keep = append(keep, d)
		}
	}
	if len(bumped) == 0 {
		return
	}
	clear(ds[len(keep):])
	if len(keep) == 0 {
		delete(g.departing, key)
	} else {
		g.departing[key] = keep
	}
	slices.SortFunc(bumped, func(a, b *departure) int {
		return cmp.Or(cmp.Compare(b.p.prio, a.p.prio), cmp.Compare(a.p.req.seq, b.p.req.seq))
	})
	for _, d := range bumped {
		f.queue = insertByPriority(f.queue, withdrawalOf(d.p, d.a))
		d.again = &pending{ctx: d.p.ctx, req: d.p.req, prio: d.p.prio, done: make(chan struct{})}
		d.f = f
		f.queue = insertByPriority(f.queue, d.again)
		close(d.bump)
	}
}
