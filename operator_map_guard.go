package rxthrottle

// The watchdog set lazily (operator_map_deadline.go has the watchdog).
// A timer pending costs every goroutine switch a clock read (the
// scheduler checks its timers), and a run of quick calls makes about one
// switch a call. So a call started while the acquirer is awake does not
// set the watchdog: the acquirer sets it, for every call still running,
// before it can block (sleepLocked). A call that hangs therefore gets its
// deadline from the same timer at the same instant; a run of quick calls
// that all return before the acquirer runs again sets no timer at all.
//
// The acquirer is awake (m.acqAwake) from roomLocked's waking it, once
// the backlog has gone down, to its next sleepLocked: it is then runnable
// or running, and every path from waitRoom to anything that may block it
// goes through sleepLocked first: the end of an item's section, before it
// receives the next item; waitRoom waiting again; a grant that is not
// free, before the Bucket's wait; and its end. Only a *Bucket's
// subscription (m.lazy) waits for it, since acquireFree is the one grant
// known not to block.
//
// Exactness. On virtual time (testing/synctest) the clock moves only when
// every goroutine of the bubble is durably blocked, and the acquirer
// awake is not: so it sets the watchdog at the instant the call started,
// for the same deadline, and the watchdog fires at that deadline as if
// the call had set it (TestThrottleMapHoldTimeoutWhileAcquirerAwake). On
// the real clock it sets it once the scheduler runs it, a switch or a
// time slice later, long before any hold timeout worth setting.
//
// The invariant: m.unguarded (a call runs without the watchdog set for
// it) implies m.acqAwake; sleepLocked clears both, arming the watchdog
// for the earliest running deadline, which covers the others.

// sleepLocked is the acquirer's before anything that may block it: the
// calls started while it was awake get the watchdog now. Requires m.mu.
func (m *mapper) sleepLocked() {
	m.acqAwake = false
	if m.unguarded {
		m.guardLocked()
	}
}

// guardLocked sets the watchdog no later than the earliest deadline of
// the running calls, if any runs. Requires m.mu.
func (m *mapper) guardLocked() {
	m.unguarded = false
	m.dropReturnedLocked()
	if m.runHead == len(m.running) {
		return
	}
	if d := m.running[m.runHead].deadline; !m.watching || d < m.armedAt {
		m.watching = true
		m.armLocked(d)
	}
}
