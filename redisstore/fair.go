package redisstore

import (
	"slices"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// Fair shares of the window (SPEC.md, "Fair shares") among one process's
// callers of one schedule. The script hands each caller its departure
// when it asks, in the order of the batch; the in-memory limiters decide
// who goes only when a token is free. So that the order is the same, a
// caller is waiting, in its schedule's fair queue, from its ask until its
// departure comes: when a caller arrives that the fair queue puts before
// callers already given a departure they have not reached, their
// reservations are withdrawn and they ask again behind it (fairBumpLocked),
// as a caller of higher priority always made them do (priorities are the
// fair queue's first rule). The front grants each departure as it comes,
// in the fair queue's order (its tenant is charged then), and a caller the
// script admitted at once is served at once; one given up, refused or
// failed is removed, as if it had never arrived. The fair queue is the
// front of the schedule's window (group_planner.go), its callers the
// front's Waiters (a caller bumped keeps its Waiter, and so its place, for
// its ask again): the order every limiter's front keeps (issue 30, item
// 1).

// fairArriveLocked puts p, an admission of a Wait or Acquire, in win,
// its schedule's window: its fair queue. Requires group.mu.
func (g *group) fairArriveLocked(win *window, p *pending) {
	if !p.req.departs || p.req.how != "" || p.ctx == nil {
		return
	}
	// No Ready until the answer gives it a departure ahead (departLocked):
	// a Wait admitted at once allocates no channel. Its place in the
	// front is its ask's in the batches (group_batch.go), so the script's
	// departures follow the front's order, which grants them
	// (group_planner.go).
	w := &front.Waiter{N: p.req.n, Who: callerOf(p.ctx, p.req.n), Ask: p}
	win.front.Push(w)
	p.fair = w
}

// fairLeaveLocked takes p's caller out of the window of key's schedule:
// served (the script admitted it at once) or withdrawn (it gave up, was
// refused or failed: as if it had never arrived; the window's planner
// forgets its departure, if it had one, and the front grants the callers
// behind it whose departure has come). A caller whose departure comes
// leaves through the front's Dispatch instead (group_planner.go).
// Requires group.mu.
func (g *group) fairLeaveLocked(key string, p *pending, served bool) {
	w := p.fair
	if w == nil {
		return
	}
	win := g.windows[key]
	p.fair = nil
	if served {
		win.front.Serve(win.planner(), w)
		return
	}
	win.front.Cancel(win.planner(), w)
	win.dispatchLocked()
}

// fairSettleLocked follows p's answer: a caller given a departure ahead
// (recorded among the departures: p.res.dep) stays in the fair queue
// until the front grants it, one admitted at once is served (the store's
// arrival let it go at once: its admission was made before the callers
// still asking here reached Redis), and any other (refused, late,
// withdrawn, failed, blocked by held tokens) leaves it. Requires
// group.mu.
func (g *group) fairSettleLocked(key string, p *pending, err error) {
	switch {
	case p.fair == nil, p.res.dep != nil:
	case err == nil && p.res.admitted:
		g.fairLeaveLocked(key, p, true)
	default:
		g.fairLeaveLocked(key, p, false)
	}
}

// fairBumpLocked makes the asks of win's front without an answer go
// before the callers of this process with a departure they have not
// reached that the front puts after them: their reservations are
// withdrawn ahead of the asks in the next script run (ends go first), and
// they ask again in their place in the front (a caller bumped keeps its
// Waiter, asking with a new pending), as if they had arrived after the
// callers now ahead of them. It returns the front's order (All), or nil
// if the callers go in arrival order (FIFO). Requires group.mu.
func (g *group) fairBumpLocked(win *window) []*front.Waiter {
	if win.front.FIFO() {
		// One priority and one tenant waiting (the usual case): the
		// callers already go in arrival order, and nobody goes before a
		// caller with a departure, which arrived first. So an arrival
		// costs no walk of the front, however many wait.
		return nil
	}
	all := win.front.All()
	first := slices.IndexFunc(all, func(w *front.Waiter) bool { return w.Ask.(*pending).asking })
	if first < 0 || len(win.departing) == 0 {
		return all
	}
	pos := make(map[*front.Waiter]int, len(all))
	for i, w := range all {
		pos[w] = i
	}
	var bumped []*departure
	keep := win.departing[:0]
	for _, d := range win.departing {
		if w := d.p.fair; w != nil && pos[w] > first {
			bumped = append(bumped, d)
		} else {
			keep = append(keep, d)
		}
	}
	if len(bumped) == 0 {
		return all
	}
	clear(win.departing[len(keep):])
	win.departing = keep
	slices.SortFunc(bumped, func(a, b *departure) int { return pos[a.p.fair] - pos[b.p.fair] })
	g.bumpLocked(win, bumped)
	return all
}

// bumpLocked withdraws the reservations of the departures bumped, taken
// out of win's departing already, in the next script run (win.flight's),
// and makes their callers ask again in it, each in its place in the front
// (departure.again), and wakes them (departure.bump). Requires group.mu.
func (g *group) bumpLocked(win *window, bumped []*departure) {
	for _, d := range bumped {
		g.queueLocked(win, withdrawalOf(d.p, d.a))
		d.again = &pending{ctx: d.p.ctx, req: d.p.req, prio: d.p.prio, done: make(chan struct{}), fair: d.p.fair}
		d.p.fair = nil
		d.f = win.flight
		g.queueLocked(win, d.again)
		close(d.bump)
	}
	win.dispatchLocked() // the head may have lost its departure
}

// placeAllows moves each Allow's admission of q (in their order) right
// behind the last operation it goes behind: the asks and Allows of a
// higher priority, those of its priority queued before it, and the
// others (ends, withdrawals) that stood ahead of it (SPEC.md,
// "Priorities": priority, then arrival, whatever the tenants).
func placeAllows(q []*pending) {
	var xs []*pending
	for _, p := range q {
		if p.allow {
			xs = append(xs, p)
		}
	}
	for _, x := range xs {
		i := slices.Index(q, x)
		copy(q[i:], q[i+1:]) // x taken out: rest
		rest := q[:len(q)-1]
		to := 0
		for j, y := range rest {
			ordered := y.fair != nil || y.allow
			if ordered && (y.prio > x.prio || y.prio == x.prio && y.queued < x.queued) || !ordered && j < i {
				to = j + 1
			}
		}
		copy(q[to+1:], rest[to:])
		q[to] = x
	}
}
