package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/reactivex/rxgo/v2"
)

// ThrottleMap's deadline for fn: a call's context ends at its token's hold
// timeout, and a call still running then is abandoned in its place (its
// worker detached), so that one hung call cannot stall the stream.
//
// The deadlines cost no timer per call: tokens are granted in order and
// every call's deadline is its grant plus the same hold timeout, so the
// calls, kept in the order they start (m.running), have nondecreasing
// deadlines, and one timer (the watchdog) set for the oldest running call
// serves them all; it is stopped when a worker parks with no call running
// (idleWatchdogLocked), and set again by the next call, or by the acquirer
// if it is awake (operator_map_guard.go). The deadlines are
// offsets from m.epoch (nowOff), compared as integers. fn's context is the
// call itself (mapCall), whose Done channel is made only if fn asks for it.

// ErrHoldTimeout is what the error item of a ThrottleMap call that outlived
// its hold timeout wraps (errors.Is finds it, and context.DeadlineExceeded).
var ErrHoldTimeout = errors.New("the call outlived its hold timeout")

// holdTimeoutError is the error item of item whose call outlived its hold
// timeout d.
type holdTimeoutError struct {
	op   string
	item int
	d    time.Duration
}

func (e *holdTimeoutError) Error() string {
	return fmt.Sprintf("rxthrottle: %s: item #%d: the call outlived its hold timeout (%v)", e.op, e.item, e.d)
}

func (e *holdTimeoutError) Is(target error) bool {
	return target == ErrHoldTimeout || target == context.DeadlineExceeded
}

// holdTimeoutOf returns the clock and the hold timeout of l, a Limiter or
// a KeyedLimiter: a Bucket's own, or, for another, the hold timeout it
// reports with a HoldTimeout method, else DefaultHoldTimeout (the default
// of every limiter in this module), on the clock its holds time out on:
// a Keyed's (holdClocker: ForKey's Limiter over one, and a type embedding
// one, too), else the real clock (redisstore's holds time out on the
// server's).
func holdTimeoutOf(l any) (clock.Clock, time.Duration) {
	if b, ok := l.(*Bucket); ok {
		return b.hooks.clock, b.hooks.holdTimeout
	}
	clk := clock.Clock(nil)
	if c, ok := l.(holdClocker); ok {
		clk = c.holdClock()
	}
	if clk == nil {
		clk = clock.New()
	}
	if h, ok := l.(interface{ HoldTimeout() time.Duration }); ok {
		if d := h.HoldTimeout(); d > 0 {
			return clk, d
		}
	}
	return clk, DefaultHoldTimeout
}

// holdClocker is a limiter of this package whose Tokens time out on a
// clock it was given (WithClock), not necessarily the real one.
type holdClocker interface {
	holdClock() clock.Clock // nil for the real clock
}

// startLocked makes the call of the job j points to, due to end at its
// deadline, and keeps it with the running ones, arming the watchdog if it
// is not set for it already. Requires m.mu.
func (m *mapper) startLocked(j *mapJob) *mapCall {
	c := m.newCallLocked(j)
	if m.runHead > 32 && m.runHead*2 > len(m.running) { // reclaim the front
		k := copy(m.running, m.running[m.runHead:])
		clear(m.running[k:])
		m.running, m.runHead = m.running[:k], 0
	}
	// In deadline order: a call is usually the latest, but a retry's
	// deadline (its new grant) may come after calls granted before it and
	// started after it.
	at := len(m.running)
	for at > m.runHead && m.running[at-1].deadline > c.deadline {
		at--
	}
	if at == len(m.running) {
		m.running = append(m.running, c)
	} else {
		m.running = slices.Insert(m.running, at, c)
	}
	// The watchdog set no later than the new head's deadline is left
	// alone: firing early, it sets itself again for the head (watchdog),
	// and a timer reset per call would cost more than the call's token.
	// While the acquirer is awake it is left unset (operator_map_guard.go).
	if !m.watching || c.deadline < m.armedAt {
		if m.acqAwake {
			m.unguarded = true
		} else {
			m.guardLocked()
		}
	}
	return c
}

// nowOff reads m.clock, as fn's deadline needs it after a grant, as an
// offset from m.epoch. The real clock is read as time.Since(m.epoch) (one
// read of the monotonic clock, as a Bucket reads it) and not with
// time.Now, which reads the wall clock too.
func (m *mapper) nowOff() int64 {
	if m.realClock {
		return int64(time.Since(m.epoch))
	}
	return int64(m.clock.Now().Sub(m.epoch))
}

// timeOf returns the time of the offset off (nowOff's): on the real clock
// it has both readings, the wall one m.epoch's plus the monotonic time
// since, as the times a Bucket reports.
func (m *mapper) timeOf(off int64) time.Time { return m.epoch.Add(time.Duration(off)) }

// armLocked sets the watchdog to fire at off, the earliest deadline of
// the running calls: it covers them all. Requires m.mu.
func (m *mapper) armLocked(off int64) {
	m.armedAt, m.unguarded = off, false
	d := time.Duration(math.MaxInt64) // a deadline saturated (grant's addSat): never
	if off < math.MaxInt64 {
		d = time.Duration(off - m.nowOff())
	}
	if m.watch == nil {
		m.watch = m.clock.AfterFunc(d, m.watchdog)
		return
	}
	m.watch.Reset(d)
}

// dropReturnedLocked drops the calls that have returned from the front of
// m.running. Requires m.mu.
func (m *mapper) dropReturnedLocked() {
	for m.runHead < len(m.running) && m.running[m.runHead].is(callReturned) {
		m.running[m.runHead] = nil
		m.runHead++
	}
	if m.runHead == len(m.running) {
		m.running, m.runHead = m.running[:0], 0
	}
}

// watchdog expires the running calls whose deadline has passed and sets
// itself for the next one. An expired call is abandoned: its context ends
// with context.DeadlineExceeded, its slot gets the timeout's error item in
// its place, its worker (inside fn) is detached, and the outputs behind go
// on. The watchdog then holds the detached workers' places in m.wg while
// it may send downstream.
func (m *mapper) watchdog() {
	m.mu.Lock()
	now := m.nowOff()
	expired := 0
	for {
		m.dropReturnedLocked()
		if m.runHead == len(m.running) {
			m.watching, m.unguarded = false, false
			break
		}
		c := m.running[m.runHead]
		if c.deadline > now {
			m.armLocked(c.deadline)
			break
		}
		m.running[m.runHead] = nil
		m.runHead++
		c.state.Or(callTimedOut)
		c.end(callExpired)
		s := c.job.slot
		s.item, s.done = rxgo.Error(&holdTimeoutError{op: m.op, item: c.seq, d: m.holdTimeout}), true
		expired++
	}
	if expired > 0 {
		m.advanceLocked()
		m.emitLocked(false)
	}
	m.mu.Unlock()
	for range expired {
		m.wg.Done()
	}
}

// endRunningLocked ends the context of every running call: the
// subscription has ended. Requires m.mu.
func (m *mapper) endRunningLocked() {
	for _, c := range m.running[m.runHead:] {
		if !c.is(callReturned) {
			c.end(callSubscription)
		}
	}
}

// idleWatchdogLocked stops the watchdog's timer if no call runs, as a
// worker is about to park: the next call to start sets it again. A timer
// pending costs every goroutine switch a clock read (the scheduler checks
// its timers), and a run of quick calls makes two switches an item where
// none is running; a worker parks once a run, so the timer stays set only
// while the workers run (BENCHMARKS.md, "ThrottleMap: a smaller call
// context, and no watchdog while the workers park"). Requires m.mu.
func (m *mapper) idleWatchdogLocked() {
	if m.runHead < len(m.running) {
		return
	}
	m.unguarded = false
	if m.watching {
		m.watch.Stop()
		m.watching = false
	}
}

// stopWatchdog stops the watchdog's timer once no call can run.
func (m *mapper) stopWatchdog() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watch != nil {
		m.watch.Stop()
	}
	m.watching = false
}
