package redisstore

// departure is a caller of this process whose admission the script has
// given a departure still ahead: it sleeps until then (taker.depart). Until
// it goes it is still waiting, as SPEC.md's callers are until their
// departure: a caller of higher priority that asks for its admission
// meanwhile takes its place, and so does a caller the fair queue puts
// before it (group.fairBumpLocked). Its fields are guarded by group.mu.
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
// schedule stored under key, among the departures of its window;
// requires group.mu.
func (g *group) departLocked(key string, p *pending) *departure {
	d := &departure{p: p, a: p.res, bump: make(chan struct{})}
	win := g.windows[key]
	win.departing = append(win.departing, d)
	return d
}

// leave takes d's caller out of key's window as it goes (served) or gives
// up, the window's planner forgetting d, and reports whether it may:
// false if a caller that goes before it took its place first, and it is
// to ask again (d.again).
func (g *group) leave(key string, d *departure, served bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d.again != nil {
		return false
	}
	g.fairLeaveLocked(key, d.p, served)
	return true
}
