package redisstore

import (
	"slices"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// window is one schedule's group commit in this process: its call in
// flight, with the operations queued for the next (flight, group.go),
// and its callers waiting for the window (a Wait's or an Acquire's, from
// its ask until its departure comes: fair.go), the waiters of an
// internal/admission front in SPEC.md's order, with the departures the
// script gave them that they have not reached (departures.go), which its
// planner keeps (windowPlanner). The front grants each waiter at its
// departure, in its order (Dispatch, woken by the front's one timer);
// only a caller the script admitted at once leaves at once, wherever it
// stands (Front.Serve: the store's arrival let it go). Its front is an
// Asking front: it decides the callers' arrivals and counts, for
// WithMaxQueue, the callers of the schedule known to wait, wherever they
// wait (take_wait.go). Guarded by group.mu.
type window struct {
	g         *group
	key       string  // the schedule's first key, under which g keeps it
	flight    *flight // present while a call is in flight
	front     front.Asking[rxthrottle.Event]
	departing []*departure // in the order they were given
	// asking counts the front's waiters whose ask waits for the next
	// batch (pending.asking: no answer yet); while any does, none of them
	// arrived (Waiter.Seq) before cursor (group_batch.go).
	asking int
	cursor uint64
}

// windowLocked returns the window of the schedule stored under key, made
// if there is none. Requires group.mu.
func (g *group) windowLocked(key string) *window {
	win := g.windows[key]
	if win == nil {
		if g.windows == nil {
			g.windows = map[string]*window{}
		}
		if win = g.spare; win != nil {
			g.spare, win.key = nil, key
		} else {
			win = &window{g: g, key: key}
		}
		g.windows[key] = win
	}
	return win
}

// landedLocked follows the last answer of the call in flight on the
// schedule stored under key, with nothing queued for another (no end, no
// Allow, no ask without an answer): the window is forgotten if nobody
// waits in it either. Requires group.mu.
func (g *group) landedLocked(key string) {
	win := g.windows[key]
	win.flight = nil
	g.forgetIdleLocked(win)
}

// forgetIdleLocked forgets win if it keeps nothing: no call in flight,
// no waiter in its front (nor, then, a departure), no caller counted
// waiting (take_wait.go). Requires group.mu.
func (g *group) forgetIdleLocked(win *window) {
	if win.flight == nil && win.front.Waiting() == 0 && win.front.Waiters() == 0 {
		delete(g.windows, win.key)
		g.spare = win // an empty front is as good as new
	}
}

// offsetOf returns t as an offset of the windows' fronts.
func offsetOf(t time.Time) int64 { return t.UnixNano() }

// departAt returns the offset d after the offset local, saturated below
// Never (a pause centuries ahead gives a departure past any offset): the
// front's timer is then armed as far as a Duration goes, and the caller
// waits until it gives up.
func departAt(local int64, d time.Duration) int64 {
	if int64(d) >= front.Never-1-local {
		return front.Never - 1
	}
	return local + int64(d)
}

// dispatchLocked grants the window's waiters whose departure has come, in
// the front's order, and arms the front's timer for the next head's.
// Requires group.mu.
func (win *window) dispatchLocked() {
	win.front.Dispatch(win.planner(), offsetOf(win.g.clock.Now()))
}

// windowPlanner is a window as its front's planner. Its methods require
// group.mu.
type windowPlanner window

var _ front.Planner = (*windowPlanner)(nil)

// planner returns win as its front's planner.
func (win *window) planner() *windowPlanner { return (*windowPlanner)(win) }

// FreeAt returns the departure the script gave the head of the front
// (Dispatch asks of the head only), or Never while it has none: its
// admission is queued or in flight, or asks again behind a caller that
// took its place. The script's departures follow the front's order
// (batch.lua: none before the latest live departure; the batches take
// the waiters' asks in the front's order: group_batch.go), but for
// the difference between two answers' latencies, by which a caller may
// go after its departure as its answer gave it, never before.
func (p *windowPlanner) FreeAt(int, uint8) int64 {
	if d := p.departureOf(p.front.Next()); d != nil {
		return d.at
	}
	return front.Never
}

// departureOf returns w's departure, or nil if it has none; the head's is
// the first given (departing) but after a caller of higher priority took
// the place of those before it.
func (p *windowPlanner) departureOf(w *front.Waiter) *departure {
	for _, d := range p.departing {
		if d.w == w {
			return d
		}
	}
	return nil
}

// NextChange is Never: the window changes only as answers come and
// callers leave, which dispatch.
func (p *windowPlanner) NextChange() int64 { return front.Never }

// Grant hands w nothing more: its departure is its admission, made by
// the script (Left forgets it).
func (p *windowPlanner) Grant(*front.Waiter, int64) {}

// Unservable is nil: the script refuses what cannot be served.
func (p *windowPlanner) Unservable(*front.Waiter) error { return nil }

// Earliest is Unknown: deadlines are the script's to judge.
func (p *windowPlanner) Earliest(int64, int) int64 { return front.Unknown }

// Left forgets the departure of w, which leaves the window granted (its
// departure came), served (admitted at once) or withdrawn (its caller
// gave up, was refused or failed; its reservation, if any, is the
// caller's to withdraw in Redis), and the window itself once nobody waits
// in it (empty: no departure is left either, since each belongs to a
// waiter), nothing is in flight and no caller is counted waiting. The
// schedule's counters count the callers.
func (p *windowPlanner) Left(w *front.Waiter, empty bool) {
	if i := slices.IndexFunc(p.departing, func(d *departure) bool { return d.w == w }); i >= 0 {
		p.departing = slices.Delete(p.departing, i, i+1)
	}
	if empty {
		p.g.forgetIdleLocked((*window)(p))
	}
}

// Clock is the limiter's.
func (p *windowPlanner) Clock() clock.Clock { return p.g.clock }

// Wake is the front's timer's: the head's departure has come.
func (p *windowPlanner) Wake() {
	g := p.g
	g.mu.Lock()
	defer g.mu.Unlock()
	now := offsetOf(g.clock.Now())
	if t := p.front.Timer(); t != nil {
		t.Expired(now)
	}
	p.front.Dispatch(p, now)
}
