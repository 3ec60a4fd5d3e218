package redisstore

import (
	"context"
	"slices"
	"sync"

	"github.com/rxthrottle/rxthrottle"
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
type lines struct {
	mu sync.Mutex
	m  map[string]*line // by the schedule's first key; absent when empty
}

// line is one schedule's blocked callers: the head, asking Redis, and the
// others in the order they go: the heads a caller of higher priority took
// the place of (pre, by priority), each first of its priority, then rest.
type line struct {
	head *turn
	// idle, while the head sleeps between its asks, is closed when a
	// caller of higher priority takes its place.
	idle chan struct{}
	pre  []*turn
	rest fairq.Queue[*turn]
}

// turn is one caller's place in a line; ch is closed when it is the head
// (a new one is made if it loses the head: read it with lines.turn).
type turn struct {
	ch     chan struct{}
	c      fairq.Caller
	queued bool // in rest
	item   fairq.Item[*turn]
}

// callerOf returns what orders a caller of n tokens with ctx in a line.
func callerOf(ctx context.Context, n int) fairq.Caller {
	key, w := rxthrottle.TenantFrom(ctx)
	return fairq.Caller{Prio: rxthrottle.PriorityFrom(ctx), Tenant: key, Weight: w, Cost: n}
}

// join puts caller c in key's line (only if the line is not empty, when
// ifBusy), in its place among the callers waiting but never ahead of the
// head while it asks Redis, and returns its turn, or nil.
func (l *lines) join(key string, ifBusy bool, c fairq.Caller) *turn {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	if ifBusy && q == nil {
		return nil
	}
	t := &turn{ch: make(chan struct{}), c: c}
	switch {
	case q == nil:
		if l.m == nil {
			l.m = map[string]*line{}
		}
		l.m[key] = &line{head: t}
		close(t.ch)
	case q.idle != nil && c.Prio > q.head.c.Prio:
		close(q.idle)
		q.demoteLocked(t)
	default:
		t.item.Value, t.queued = t, true
		q.rest.Push(&t.item, c)
	}
	return t
}

// turn returns the channel closed when t is the head of key's line.
func (l *lines) turn(t *turn) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return t.ch
}

// demoteLocked makes next, a caller of higher priority than the head's,
// the head, and puts the head back first of its priority, to wait for its
// turn again. Requires lines.mu.
func (q *line) demoteLocked(next *turn) {
	old := q.head
	old.ch = make(chan struct{})
	i := 0
	for i < len(q.pre) && q.pre[i].c.Prio >= old.c.Prio {
		i++
	}
	q.pre = slices.Insert(q.pre, i, old)
	q.idle, q.head = nil, next
	close(next.ch)
}

// sleeping marks t, the head of key's line, as sleeping between its asks,
// and returns the channel closed if a caller of higher priority takes its
// place meanwhile; closed already if one arrived during its round trip
// (it queued behind it then, and now goes first).
func (l *lines) sleeping(key string, t *turn) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	if q == nil || q.head != t {
		return nil
	}
	idle := make(chan struct{})
	q.idle = idle
	if q.rest.Len() > 0 && q.rest.Peek().Caller().Prio > t.c.Prio {
		next := q.rest.Pop().Value
		next.queued = false
		close(idle)
		q.demoteLocked(next)
	}
	return idle
}

// awake marks t, if still the head of key's line, as asking Redis.
func (l *lines) awake(key string, t *turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.m[key]; q != nil && q.head == t {
		q.idle = nil
	}
}

// busy reports whether key's line has callers.
func (l *lines) busy(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[key] != nil
}

// leave takes t out of key's line; if t was the head, the next caller's
// turn comes.
func (l *lines) leave(key string, t *turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	switch {
	case q == nil:
	case t.queued:
		t.queued = false
		q.rest.Remove(&t.item)
	case q.head != t:
		if i := slices.Index(q.pre, t); i >= 0 {
			q.pre = slices.Delete(q.pre, i, i+1)
		}
	case len(q.pre) == 0 && q.rest.Len() == 0:
		delete(l.m, key)
	default:
		q.idle = nil
		var next *turn
		if len(q.pre) > 0 && (q.rest.Len() == 0 || q.pre[0].c.Prio >= q.rest.Peek().Caller().Prio) {
			next, q.pre = q.pre[0], q.pre[1:]
		} else {
			next = q.rest.Pop().Value
			next.queued = false
		}
		q.head = next
		close(next.ch)
	}
}

// len returns the number of callers in key's line, the head included.
func (l *lines) len(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.m[key]; q != nil {
		return 1 + len(q.pre) + q.rest.Len()
	}
	return 0
}
