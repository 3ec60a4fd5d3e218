package redisstore

import (
	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// A caller of Wait or Acquire at its schedule's window, an Asking front
// (internal/admission; group_planner.go): the window decides its arrival
// and counts it waiting, the count WithMaxQueue bounds (SPEC.md, "Queue
// bound": per key on a Keyed limiter), under group.mu. A caller counts
// from the decision or answer that makes it wait until its take is done,
// wherever it waits: at the adaptive cap (enterGate), in the line of
// callers blocked by held tokens (line.go), for its departure
// (take_depart.go), or holding no reservation after a late answer; and
// OnWait hears of it then, once, on its own goroutine once group.mu is
// released. A caller the script admits at once never hears it. The
// window is kept while it counts a caller (forgetIdleLocked).

// arrive decides the caller's arrival on its schedule's window, past the
// adaptive cap and before its first ask: if the schedule's line of
// callers blocked by held tokens has callers, it waits behind them for
// sure: it joins the line (c.my), counted waiting, or is refused by the
// queue bound (refused), never joining the line, not even for an instant
// (a caller of a higher priority would take the head's turn). Otherwise
// it asks Redis; at the bound it may go only at once (allowOnly).
// (group.mu is taken before lines.mu.)
func (c *taker) arrive() (refused bool) {
	s, g, key := c.s, &c.s.group, c.keys[0]
	g.mu.Lock()
	var (
		win *window
		v   front.Verdict
	)
	c.my = s.lines.arrive(key, c.who, func(behind bool) bool {
		if win = g.windows[key]; win == nil && behind {
			win = g.windowLocked(key) // to count the caller
		}
		counts := &nobodyWaits
		if win != nil {
			counts = &win.front
		}
		v = counts.DecideAsk(&c.asker, behind, s.queueBound)
		return v == front.Wait
	})
	switch v {
	case front.Full:
		g.forgetIdleLocked(win)
		g.mu.Unlock()
		return true
	case front.Wait:
		c.blocked = true
		c.countLocked(win)
		c.asker.Unlock(&g.mu, runHook)
		return false
	}
	c.req.allowOnly = v == front.AskAtOnce
	g.mu.Unlock()
	return false
}

// waitAtGate decides on the caller, which waits at the adaptive cap, on
// its schedule's window: it counts waiting and OnWait hears of it, or it
// is refused by the queue bound (false).
func (c *taker) waitAtGate() bool {
	g := &c.s.group
	g.mu.Lock()
	win := g.windowLocked(c.keys[0])
	if win.front.DecideAsk(&c.asker, true, c.s.queueBound) == front.Full {
		g.forgetIdleLocked(win)
		g.mu.Unlock()
		return false
	}
	c.countLocked(win)
	c.asker.Unlock(&g.mu, runHook)
	return true
}

// waits counts the caller waiting on its schedule's window, once, and
// OnWait hears of it: the answer it has makes it wait (a departure
// ahead, blocked by held tokens, too late for its deadline).
func (c *taker) waits() {
	if c.asker.Waits() {
		return
	}
	g := &c.s.group
	g.mu.Lock()
	c.countLocked(g.windowLocked(c.keys[0]))
	c.asker.Unlock(&g.mu, runHook)
}

// countLocked counts the caller waiting on win and queues its OnWait.
// Requires group.mu.
func (c *taker) countLocked(win *window) {
	s := c.s
	ev := rxthrottle.Event{Key: s.hooks.key(c.key), Arrived: c.arrived, N: c.n}
	win.front.Wait(&c.asker, s.hooks.onWait, ev)
}

// stopWaiting ends the caller's count on its schedule's window, if it
// counts, at the end of its take.
func (c *taker) stopWaiting() {
	if !c.asker.Waits() {
		return
	}
	g := &c.s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	win := g.windows[c.keys[0]] // kept while it counts the caller
	win.front.Leave(&c.asker)
	g.forgetIdleLocked(win)
}

// waitingOn returns the callers of this process counted waiting on the
// schedule stored under key, the count WithMaxQueue bounds: a Bucket's
// lease pool reads it under its own lock (lease_take.go), which is taken
// before group.mu, never after.
func (g *group) waitingOn(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if win := g.windows[key]; win != nil {
		return win.front.Waiters()
	}
	return 0
}

// nobodyWaits is the front of a schedule with no window: it counts
// nobody waiting. It is only read.
var nobodyWaits front.Asking[rxthrottle.Event]

// runHook makes a hook call queued under group.mu (limiterkit.CallHook).
func runHook(call front.Call[rxthrottle.Event]) { limiterkit.CallHook(call.F, call.Ev) }
