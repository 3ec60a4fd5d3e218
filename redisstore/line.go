package redisstore

import (
	"slices"
	"sync"
)

// lines keep this process's callers blocked by held tokens in FIFO order,
// per schedule: only the head of a line asks Redis again (when woken by a
// local release, at the earliest lease deadline, or after the poll
// interval); the others wait for their turn, and a caller that arrives
// while a line is not empty queues in it instead of asking Redis. So
// within a process, blocked callers go in the order of their priorities
// (rxthrottle.WithPriority), then of their arrival. Across processes
// there is no line: after a release, the first process to ask gets the
// token (see Bucket, "Held tokens").
type lines struct {
	mu sync.Mutex
	m  map[string][]*turn // by the schedule's first key; absent when empty
}

// turn is one caller's place in a line; ch is closed when it is the head.
type turn struct {
	ch   chan struct{}
	prio int
}

// join puts a caller of priority prio in key's line (only if the line is
// not empty, when ifBusy), behind every caller of its priority or higher
// but never ahead of the head (which is asking Redis already), and
// returns its turn, or nil.
func (l *lines) join(key string, ifBusy bool, prio int) *turn {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	if ifBusy && len(q) == 0 {
		return nil
	}
	t := &turn{ch: make(chan struct{}), prio: prio}
	if len(q) == 0 {
		close(t.ch)
	}
	if l.m == nil {
		l.m = map[string][]*turn{}
	}
	i := len(q)
	for i > 1 && q[i-1].prio < prio {
		i--
	}
	l.m[key] = slices.Insert(q, i, t)
	return t
}

// busy reports whether key's line has callers.
func (l *lines) busy(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m[key]) > 0
}

// leave takes t out of key's line; if t was the head, the next caller's
// turn comes.
func (l *lines) leave(key string, t *turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[key]
	for i, x := range q {
		if x != t {
			continue
		}
		q = append(q[:i], q[i+1:]...)
		if i == 0 && len(q) > 0 {
			close(q[0].ch)
		}
		break
	}
	if len(q) == 0 {
		delete(l.m, key)
	} else {
		l.m[key] = q
	}
}
