package redisstore

import front "github.com/rxthrottle/rxthrottle/internal/admission"

// departure is a caller of this process whose admission the script has
// given a departure still ahead: it waits until its schedule's window
// grants it (taker.depart, group_planner.go). Until it goes it is still
// waiting, as SPEC.md's callers are until their departure: a caller of
// higher priority that asks for its admission meanwhile takes its place,
// and so does a caller the fair queue puts before it
// (group.fairBumpLocked). Its fields are guarded by group.mu.
type departure struct {
	p *pending  // its admission as it was asked: context, request, priority
	a admission // the answer that gave it its departure
	// w is its caller's waiter in the window's front, which grants it
	// (closes w.Ready) at its departure.
	w *front.Waiter
	// at is its departure on the limiter's clock, as an offset
	// (offsetOf): when the answer came, plus the delay it gave.
	at int64
	// bump is closed when a caller of higher priority took its place: its
	// reservation is withdrawn, and it asks again (again, queued in f)
	// in the same script run, right behind that caller.
	bump  chan struct{}
	again *pending
	f     *flight
}

// departLocked records p, whose answer gives it a departure ahead at the
// offset at on the schedule stored under key, among the departures of
// its window, whose front grants it then; requires group.mu.
func (g *group) departLocked(key string, p *pending, at int64) *departure {
	w := p.fair
	if w.Ready == nil { // a caller that asks again after a bump has one
		w.Ready = make(chan struct{})
	}
	d := &departure{p: p, a: p.res, w: w, at: at, bump: make(chan struct{})}
	win := g.windows[key]
	win.departing = append(win.departing, d)
	return d
}

// giveUp takes d's caller, whose context ended before the window granted
// its departure, out of key's window, and says how its wait ends: gaveUp
// (its reservation is to be withdrawn); goes if the window granted it
// meanwhile (its departure came as its context ended: it goes, as
// rxthrottle.Bucket's caller does); bumped if a caller that goes before
// it took its place first (it asks again: d.again).
func (g *group) giveUp(key string, d *departure) outcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case d.again != nil:
		return bumped
	case d.w.State == front.Granted:
		return goes
	}
	g.fairLeaveLocked(key, d.p, false)
	return gaveUp
}

// replanLocked re-plans the callers of win with a departure ahead that
// the script gave under other limits than enc, those in force now (a
// SetLimit, here or in another process: config.go): the schedule goes on
// as if the new limits had always been in force and waiting callers keep
// their places (SPEC.md, "Changing limits"), so their reservations are
// withdrawn in the next script run and they ask again in it, in their
// places, as callers a caller of higher priority goes before do
// (bumpLocked). A caller whose cost the new limits do not serve fails
// there instead (its ask is answered stale: commitConf). A key's own
// limits (a tier) are not the limiter's: its callers keep theirs. With
// no call in flight, the first of them leads the run. Requires group.mu.
func (g *group) replanLocked(win *window, enc string) {
	var stale []*departure
	keep := win.departing[:0]
	for _, d := range win.departing {
		if d.a.tier == "" && d.a.ranUnder != enc {
			stale = append(stale, d)
		} else {
			keep = append(keep, d)
		}
	}
	if len(stale) == 0 {
		return
	}
	clear(win.departing[len(keep):])
	win.departing = keep
	lead := win.flight == nil
	if lead {
		win.flight = &flight{key: win.key}
	}
	g.bumpLocked(win, stale)
	if !lead {
		return // the run in flight elects the next leader as it lands
	}
	var all []*front.Waiter
	if !win.front.FIFO() {
		all = win.front.All()
	}
	if next := win.leaderLocked(all); next != nil {
		next.lead = true
		close(next.done)
	}
}

// replan re-plans the callers of every window of s whose departures the
// script gave under other limits than those in force (replanLocked).
func (s *schedule) replan() {
	enc := s.lim.Load().enc
	g := &s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, win := range g.windows {
		g.replanLocked(win, enc)
	}
}
