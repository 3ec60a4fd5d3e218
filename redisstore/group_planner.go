package redisstore

import (
	"slices"

	"github.com/benbjohnson/clock"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// window is one schedule's group commit in this process: its call in
// flight, with the operations queued for the next (flight, group.go),
// and its callers waiting for the window (a Wait's or an Acquire's, from
// its ask until its departure comes: fair.go), the waiters of an
// internal/admission front in SPEC.md's order, with the departures the
// script gave them that they have not reached (departures.go), which its
// planner keeps (windowPlanner). The group serves each waiter as its
// departure comes (Front.Serve), not through Dispatch: the script, not
// the front, decided when each goes. Guarded by group.mu.
type window struct {
	g         *group
	key       string  // the schedule's first key, under which g keeps it
	flight    *flight // present while a call is in flight
	front     front.Front
	departing []*departure // in the order they were given
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
// schedule stored under key, with nothing queued for another: the window
// is forgotten if nobody waits in it either. Requires group.mu.
func (g *group) landedLocked(key string) {
	win := g.windows[key]
	win.flight = nil
	if win.front.Waiting() == 0 {
		g.forgetLocked(win)
	}
}

// forgetLocked forgets win, in which nothing is in flight and nobody
// waits (nor, then, has a departure). Requires group.mu.
func (g *group) forgetLocked(win *window) {
	delete(g.windows, win.key)
	g.spare = win // an empty front is as good as new
}

// windowPlanner is a window as its front's planner. Its methods require
// group.mu.
type windowPlanner window

var _ front.Planner = (*windowPlanner)(nil)

// planner returns win as its front's planner.
func (win *window) planner() *windowPlanner { return (*windowPlanner)(win) }

// FreeAt is Never: a waiter goes at the departure the script gave it,
// served then (Front.Serve), never through Dispatch.
func (p *windowPlanner) FreeAt(int, uint8) int64 { return front.Never }

// NextChange is Never: the front's timer is never armed (each caller
// sleeps until its own departure).
func (p *windowPlanner) NextChange() int64 { return front.Never }

// Grant is never called (FreeAt).
func (p *windowPlanner) Grant(*front.Waiter, int64) {}

// Unservable is nil: the script refuses what cannot be served.
func (p *windowPlanner) Unservable(*front.Waiter) error { return nil }

// Earliest is Unknown: deadlines are the script's to judge.
func (p *windowPlanner) Earliest(int64, int) int64 { return front.Unknown }

// Left forgets the departure of w, which leaves the window served (its
// departure came) or withdrawn (its caller gave up, was refused or
// failed; its reservation, if any, is the caller's to withdraw in Redis),
// and the window itself once nobody waits in it (empty: no departure is
// left either, since each belongs to a waiter) and nothing is in flight.
// The schedule's counters count the callers.
func (p *windowPlanner) Left(w *front.Waiter, empty bool) {
	if i := slices.IndexFunc(p.departing, func(d *departure) bool { return d.p.fair == w }); i >= 0 {
		p.departing = slices.Delete(p.departing, i, i+1)
	}
	if empty && p.flight == nil {
		p.g.forgetLocked((*window)(p))
	}
}

// Clock is nil: the timer is never armed (NextChange).
func (p *windowPlanner) Clock() clock.Clock { return nil }

// Wake does nothing: the timer is never armed.
func (p *windowPlanner) Wake() {}
