package redisstore

import (
	"github.com/benbjohnson/clock"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// linePlanner is a line as its front's planner: one turn, free while no
// head holds it. Its methods require lines.mu.
type linePlanner line

var _ front.Planner = (*linePlanner)(nil)

// planner returns q as its front's planner.
func (q *line) planner() *linePlanner { return (*linePlanner)(q) }

// FreeAt returns Never while the head holds the turn (its leave or yield
// frees it, and dispatches), else any instant.
func (p *linePlanner) FreeAt(int, uint8) int64 {
	if p.head != nil {
		return front.Never
	}
	return front.Unknown
}

// NextChange is Never: only a caller frees the turn, so the front's
// timer is never armed.
func (p *linePlanner) NextChange() int64 { return front.Never }

// Grant gives w the turn.
func (p *linePlanner) Grant(w *front.Waiter, _ int64) { p.head = w }

// Unservable is nil: every caller gets its turn.
func (p *linePlanner) Unservable(*front.Waiter) error { return nil }

// Earliest is Unknown: deadlines are Redis's to judge.
func (p *linePlanner) Earliest(int64, int) int64 { return front.Unknown }

// Left counts nothing: the schedule's counters count the callers.
func (p *linePlanner) Left(*front.Waiter, bool) {}

// Clock is nil: the timer is never armed (NextChange).
func (p *linePlanner) Clock() clock.Clock { return nil }

// Wake does nothing: the timer is never armed.
func (p *linePlanner) Wake() {}
