package redisstore

import (
	"context"
	"sync"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// lines keep this process's callers blocked by held tokens in order, per
// schedule: only the head of a line asks Redis again (when woken by a
// local release, at the earliest lease deadline, or after the poll
// interval); the others wait for their turn, and a caller that arrives
// while a line is not empty queues in it instead of asking Redis. So
// within a process, blocked callers go in the order of their priorities
// (rxthrottle.WithPriority), then of their tenants' fair shares
// (rxthrottle.WithTenant; SPEC.md, "Fair shares"), then of their arrival,
// as the in-memory limiters' waiters do. A caller of a higher priority
// than the head's becomes the head, and the head waits for its turn
// again, first of its priority: at once if it arrives while the head
// sleeps between its asks, or as the head's answer says it is blocked
// still if it arrives during the head's round trip (an answer that
// admits the head is the instant's: the caller arrived after it).
// Across processes there is no line: after a release, the first process
// to ask gets the token (see Bucket, "Held tokens").
//
// A line is an internal/admission front with one turn to give: the
// callers waiting for their turn are the front's waiters, in its order,
// and the head holds the turn the front granted it (linePlanner), until
// it leaves the line or gives the turn back to a caller of a higher
// priority (front.Requeue puts it back first of its priority).
type lines struct {
	mu sync.Mutex
	m  map[string]*line // by the schedule's first key; absent when empty
}

// line is one schedule's blocked callers: the head, asking Redis, and the
// front's waiters. Its methods require lines.mu.
type line struct {
	front front.Front
	head  *front.Waiter // holds the turn
	// idle, while the head sleeps between its asks, is closed when a
	// caller of higher priority takes its place.
	idle chan struct{}
}

// callerOf returns what orders a caller of n tokens with ctx in a line.
func callerOf(ctx context.Context, n int) fairq.Caller {
	key, w := rxthrottle.TenantFrom(ctx)
	return fairq.Caller{Prio: rxthrottle.PriorityFrom(ctx), Tenant: key, Weight: w, Cost: n}
}

// join puts caller c in key's line (only if the line is not empty, when
// ifBusy), in its place among the callers waiting but never ahead of the
// head while it asks Redis, and returns its place (its Ready is closed
// when its turn comes: read it with lines.turn), or nil.
func (l *lines) join(key string, ifBusy bool, c fairq.Caller) *front.Waiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	if q == nil {
		if ifBusy {
			return nil
		}
		if l.m == nil {
			l.m = map[string]*line{}
		}
		q = new(line)
		l.m[key] = q
	}
	w := front.NewWaiter(0, c.Cost, 0, c)
	q.front.Push(w)
	q.front.Dispatch(q.planner(), 0) // its turn, if the line was empty
	if q.idle != nil && q.yieldLocked() {
		close(q.idle)
		q.idle = nil
	}
	return w
}

// turn returns the channel closed when w is the head of its line.
func (l *lines) turn(w *front.Waiter) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return w.Ready
}

// yieldLocked makes the caller next in line, if it is of a higher
// priority than the head's, the head, and puts the head back first of
// its priority, to wait for its turn again; it reports whether it did.
func (q *line) yieldLocked() bool {
	next := q.front.Next()
	if next == nil || next.Who.Prio <= q.head.Who.Prio {
		return false
	}
	old := q.head
	q.head = nil
	q.front.Requeue(old)
	q.front.Dispatch(q.planner(), 0)
	return true
}

// sleeping marks w, the head of key's line, as sleeping between its asks,
// and returns the channel closed if a caller of higher priority takes its
// place meanwhile; closed already if one arrived during its round trip
// (it queued behind it then, and now goes first).
func (l *lines) sleeping(key string, w *front.Waiter) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	if q == nil || q.head != w {
		return nil
	}
	idle := make(chan struct{})
	q.idle = idle
	if q.yieldLocked() {
		close(idle)
		q.idle = nil
	}
	return idle
}

// awake marks w, if still the head of key's line, as asking Redis.
func (l *lines) awake(key string, w *front.Waiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.m[key]; q != nil && q.head == w {
		q.idle = nil
	}
}

// busy reports whether key's line has callers.
func (l *lines) busy(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[key] != nil
}

// leave takes w out of key's line; if w was the head, the next caller's
// turn comes.
func (l *lines) leave(key string, w *front.Waiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	switch {
	case q == nil:
		return
	case q.head == w:
		q.head, q.idle = nil, nil
		q.front.Dispatch(q.planner(), 0)
	case w.State == front.Waiting:
		q.front.Cancel(q.planner(), w)
	}
	if q.head == nil {
		delete(l.m, key) // nobody waits: the front grants the turn while anybody does
	}
}

// len returns the number of callers in key's line, the head included.
func (l *lines) len(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.m[key]; q != nil {
		return 1 + q.front.Waiting()
	}
	return 0
}

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
