package redisstore

import (
	"context"
	"sync"

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
// priority (front.Requeue puts it back first of its priority). Whether a
// caller arriving waits in the line is its schedule's window's decision,
// with the queue bound (take_wait.go): arrive runs under group.mu, which
// is taken before lines.mu, never after.
type lines struct {
	mu sync.Mutex
	m  map[string]*line // by the schedule's first key; absent when nobody waits
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

// arrive is the arrival of caller c on the schedule stored under key:
// waits, told whether key's line has callers (c would wait behind them),
// decides whether c waits (the schedule's window decides it, with the
// queue bound: take_wait.go, which holds group.mu). If it does, c queues
// in the line, in its place among the callers waiting but never ahead of
// the head while it asks Redis, and its place is returned; else nil (c
// asks Redis, or is refused, never joining the line).
func (l *lines) arrive(key string, c fairq.Caller, waits func(behind bool) bool) *front.Waiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	if !waits(q != nil && q.head != nil) {
		return nil
	}
	return q.joinLocked(c)
}

// join puts caller c, blocked by held tokens, in key's line, in its place
// among the callers waiting but never ahead of the head while it asks
// Redis, and returns its place (its Ready is closed when its turn comes:
// read it with lines.turn).
func (l *lines) join(key string, c fairq.Caller) *front.Waiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.getLocked(key).joinLocked(c)
}

// getLocked returns key's line, made if there is none.
func (l *lines) getLocked(key string) *line {
	q := l.m[key]
	if q == nil {
		if l.m == nil {
			l.m = map[string]*line{}
		}
		q = new(line)
		l.m[key] = q
	}
	return q
}

// joinLocked queues c (see join).
func (q *line) joinLocked(c fairq.Caller) *front.Waiter {
	w := front.NewWaiter(0, c.Cost, 0, c)
	q.front.Push(w)
	q.front.Dispatch(q.planner(), 0) // its turn, if nobody had it
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
	q := l.m[key]
	return q != nil && q.head != nil
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
	l.dropLocked(key, q)
}

// dropLocked forgets key's line q if it keeps nothing: no head (the front
// grants the turn while anybody waits for it).
func (l *lines) dropLocked(key string, q *line) {
	if q.head == nil && q.front.Waiting() == 0 {
		delete(l.m, key)
	}
}

// len returns the number of callers in key's line, the head included.
func (l *lines) len(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.m[key]; q != nil && q.head != nil {
		return 1 + q.front.Waiting()
	}
	return 0
}
