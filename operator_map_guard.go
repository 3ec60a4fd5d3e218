package rxthrottle

import "github.com/reactivex/rxgo/v2"

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
//
// The releases, the same way. A call that returns a value while the
// acquirer is awake does not release its token (a Bucket lock and a
// clock read of its own, the most of what a call costs beyond its
// Acquire: BENCHMARKS.md): it leaves it to the acquirer (settleLocking), which
// releases all such tokens at one reading before it can block
// (sleepUnlock). The reading is taken after every call it completes has
// returned (they left their tokens under m.mu before the acquirer took
// them), so no token comes back early (SPEC.md, "Held tokens"); it may be
// later than the call's return, which "On the real clock" allows: on
// virtual time it is the same instant (the clock stands still while the
// acquirer is awake: TestThrottleMapReleasesWhileAcquirerAwake), on the
// real clock as late as the scheduler is to run the acquirer. The
// acquirer's own next grant needs none of these tokens before then: it
// cannot ask before it runs, and a grant that is not free releases them
// before it waits.

// sleepLocked is the acquirer's before anything that may block it: the
// calls started while it was awake get the watchdog now, and the tokens
// left to it are taken, for sleepUnlock to release. Requires m.mu.
func (m *mapper) sleepLocked() {
	m.acqAwake = false
	if len(m.deferred) > 0 {
		m.releasing, m.deferred = m.deferred, m.releasing[:0]
	}
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

// sleepUnlock is sleepLocked, then m.mu.Unlock, then the release of the
// tokens sleepLocked took (settleLocking left them), at one clock reading,
// with m.mu no longer held: the Bucket's hooks run at its unlock.
// The acquirer's only. Requires m.mu.
func (m *mapper) sleepUnlock() {
	m.sleepLocked()
	m.mu.Unlock()
	if len(m.releasing) > 0 {
		m.l.(*Bucket).items().releaseAll(m.releasing)
		m.releasing = m.releasing[:0]
	}
}

// settleLocking is settle, then m.mu.Lock, for attempt number attempt
// of item seq, which returned item with tok; except that the token of a
// value, while the acquirer is awake, is left to it (sleepUnlock
// releases it). It returns with m.mu held.
func (m *mapper) settleLocking(seq int, tok Token, item rxgo.Item, attempt int) (rxgo.Item, bool) {
	if m.lazy && item.E == nil && tok.r != nil {
		m.mu.Lock()
		if m.acqAwake {
			m.deferred = append(m.deferred, tok.id)
			return item, false
		}
		m.mu.Unlock()
	}
	item, retry := m.settle(seq, tok, item, attempt)
	m.mu.Lock()
	return item, retry
}

// releaseAll releases the Tokens ids, as their Release would one after
// the other, at one clock reading: for ThrottleMap, which releases so the
// tokens of calls that returned while its acquirer was awake
// (operator_map_guard.go).
func (g *bucketItems) releaseAll(ids []uint64) {
	b := g.bucket()
	b.mu.Lock()
	now := b.now()
	b.expireHoldsLocked(now)
	for _, id := range ids {
		if n, ok := b.holds.end(id, now, true); ok {
			for range n {
				b.win.record(now)
			}
		}
	}
	if b.front.Waiting() > 0 {
		b.front.Dispatch(b.planner(), now)
	}
	b.unlock()
}
