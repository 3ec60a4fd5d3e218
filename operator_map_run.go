package rxthrottle

import (
	"context"
	"sync"
	"time"

	"github.com/reactivex/rxgo/v2"
)

// The mapper's subscription (runMap), its workers and the in-order
// emission of their results; operator_map.go has the operators and the
// mapper's state, operator_map_acquire.go the acquirer, operator_map_deadline.go
// fn's deadline and operator_map_outcome.go what fn's result does to its
// token.

// runMap runs one ThrottleMap subscription: the acquirer on a goroutine of
// its own, the workers it starts, and, once the output ends, the giving
// back of the tokens of calls never started.
func runMap(ctx context.Context, op string, src rxgo.Observable, l Limiter, fn rxgo.Func, cfg mapConfig, next chan<- rxgo.Item) {
	srcCtx, cancelSrc := context.WithCancel(ctx)
	defer cancelSrc()
	in, err := observe(srcCtx, op, src)
	if err != nil {
		rxgo.Error(err).SendContext(ctx, next)
		return
	}
	m := &mapper{op: op, l: l, fn: fn, cfg: cfg, ctx: ctx, done: ctx.Done(), next: next,
		finished: make(chan struct{}), room: make(chan struct{}, 1)}
	m.clock, m.holdTimeout = holdTimeoutOf(l)
	m.realClock = isRealClock(m.clock)
	switch b, ok := l.(*Bucket); {
	case ok:
		m.epoch = b.hooks.base // so that a grant's offset (acquireFree's) is a deadline's
		m.lazy = true
	case m.realClock:
		m.epoch = time.Now()
	default:
		m.epoch = m.clock.Now()
	}
	m.budget = mapBudget(l, cfg)
	m.idle = sync.NewCond(&m.mu)
	m.wg.Go(func() {
		defer cancelSrc() // a source no longer read must not block
		m.acquire(srcCtx, in)
	})
	select {
	case <-ctx.Done():
	case <-m.finished:
	}
	m.mu.Lock()
	m.closed, m.stop = true, true
	if ctx.Err() != nil {
		m.endRunningLocked()
	}
	unstarted := m.jobs[m.jobHead:]
	m.jobs, m.jobHead = nil, 0
	m.idle.Broadcast()
	m.mu.Unlock()
	for _, j := range unstarted { // never called: as if never departed
		_ = m.endHold(j.seq, j.tok, false)
	}
	// Nothing may send on next once this returns: rxgo closes it. A worker
	// detached by its call's expiry may still be inside fn: it sends
	// nothing once m.closed is set.
	m.wg.Wait()
	m.stopWatchdog()
}

// helperLocked makes one more worker free: it wakes a parked one or starts
// a new one. Requires m.mu.
func (m *mapper) helperLocked() {
	m.free++
	if m.parked > 0 {
		m.parked--
		m.idle.Signal()
		return
	}
	m.wg.Add(1)
	go func() {
		if !m.work() {
			m.wg.Done()
		}
	}()
}

// work is a worker's loop: it takes the queued jobs in order and runs them,
// and waits on m.idle when there is none. It starts counted as free. It
// returns true if it was detached (its call outlived its deadline, and the
// expiry took over its place in m.wg), false when it ends as usual.
func (m *mapper) work() (detached bool) {
	job := new(mapJob) // the running call's (mapCall.job), one per worker
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		for m.jobHead == len(m.jobs) {
			if m.stop {
				m.free--
				return false
			}
			m.free--
			m.parked++
			m.idleWatchdogLocked()
			m.idle.Wait() // helperLocked counts it free again
		}
		if m.stop {
			m.free--
			return false
		}
		*job = m.jobs[m.jobHead]
		m.jobs[m.jobHead] = mapJob{}
		if m.jobHead++; m.jobHead == len(m.jobs) {
			m.jobs, m.jobHead = m.jobs[:0], 0
		}
		if m.jobHead < len(m.jobs) && m.free == 1 { // the next job needs a worker
			m.helperLocked()
		}
		m.roomLocked()
		m.free--
		slot := job.slot
		c := m.startLocked(job)
		m.mu.Unlock()
		item, detached := m.attempts(c)
		if detached { // the watchdog emitted the item in its place
			return true
		}
		m.free++
		slot.item, slot.done = item, true
		m.advanceLocked()
		m.emitLocked(true)
	}
}

// advanceLocked extends the complete prefix of the slots not yet sent.
// Requires m.mu.
func (m *mapper) advanceLocked() {
	for m.ready < len(m.slots)-m.head && m.slots[m.head+m.ready].done {
		m.ready++
	}
}

// attempts runs the call c, and the item's further attempts while fn
// pushes back, each with a token of its own, and ends each attempt's token
// as its result says (settle). It returns with m.mu held: the item to
// emit, or detached if an attempt outlived its deadline (the watchdog
// emitted the item in its place, and took the worker's place in m.wg).
func (m *mapper) attempts(c *mapCall) (item rxgo.Item, detached bool) {
	job := c.job // the worker's, written under m.mu, read by TakeCallToken and the watchdog
	seq, v, tok := job.seq, job.v, job.tok
	if m.cfg.policy.Budget != nil { // else a Counter that counts nothing: no clock read
		m.budget.First(m.clock.Now())
	}
	for attempt := 1; ; attempt++ {
		item = m.callFn(c, seq, v)
		if c.is(callTaken) { // TakeCallToken: the taker ends the token
			tok = Token{}
		}
		item, retry := m.settleLocking(seq, tok, item, attempt)
		if c.is(callTimedOut) {
			return item, true
		}
		c.state.Or(callReturned)
		c.job, job.v = nil, nil // keep nothing of the item's
		c.end(0)                // context.Canceled, as a cancel function would, for a context fn kept
		m.dropReturnedLocked()
		if !retry {
			return item, false
		}
		m.mu.Unlock()
		next, err := m.token(retryContext(m.ctx), seq) // after the pause settle set
		granted := m.nowOff()
		m.mu.Lock()
		if err != nil || m.stop {
			if err == nil {
				m.mu.Unlock()
				_ = m.endHold(seq, next, false)
				m.mu.Lock()
				err = m.ctx.Err()
			}
			return rxgo.Error(err), false
		}
		if !m.budget.Retry(m.timeOf(granted)) { // WithRetryBudget: the refusal is the item's output
			m.mu.Unlock()
			_ = m.endHold(seq, next, false)
			m.mu.Lock()
			return overBudget(m.op, seq, attempt, item), false
		}
		tok = next
		job.v, job.tok, job.deadline = v, tok, addSat(granted, int64(m.holdTimeout))
		c = m.startLocked(job)
		m.mu.Unlock()
	}
}

// callFn runs fn for item seq, v, turning a panic into a *PanicError item.
func (m *mapper) callFn(ctx context.Context, seq int, v any) (item rxgo.Item) {
	defer func() {
		if r := recover(); r != nil {
			item = rxgo.Error(recovered(r, m.op+": the function", seq))
		}
	}()
	v, err := m.fn(ctx, v)
	if err != nil {
		return rxgo.Error(err)
	}
	return rxgo.Of(v)
}

// endHold releases tok, item seq's token, (used) or cancels it, and
// returns a *PanicError if that panicked: a Limiter outside this package
// may.
func (m *mapper) endHold(seq int, tok Token, used bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = recovered(r, m.op+": the Token's Release or Cancel", seq)
		}
	}()
	if used {
		tok.Release()
	} else {
		tok.Cancel()
	}
	return nil
}

// emitLocked sends the complete slots at the head, unless another goroutine
// is doing so already (it will see them: slots are completed under m.mu).
// A worker (one counted free) that has to wait for the downstream stops
// counting as free meanwhile, making sure a queued job still has a free
// worker. Requires m.mu, which it releases while it waits.
func (m *mapper) emitLocked(worker bool) {
	if m.emitting {
		return
	}
	m.emitting = true
	for m.ready > 0 && !m.closed {
		s := m.slots[m.head]
		m.slots[m.head] = nil
		if m.head++; m.head == len(m.slots) {
			m.slots, m.head = m.slots[:0], 0
		}
		m.ready--
		ok := m.ctx.Err() == nil
		if ok {
			select {
			case m.next <- s.item: // the downstream was ready: no waiting
			default:
				if worker {
					m.free--
					if m.free == 0 && m.jobHead < len(m.jobs) {
						m.helperLocked()
					}
				}
				m.mu.Unlock()
				ok = m.send(s.item)
				m.mu.Lock()
				if worker {
					m.free++
				}
			}
		}
		if !ok {
			m.closed = true
		}
		s.item = rxgo.Item{}
		m.spare = append(m.spare, s)
	}
	m.emitting = false
	m.roomLocked()
	m.checkFinishedLocked()
}

// send sends item downstream, as item.SendContext(m.ctx, m.next) does once
// m.ctx was seen live: with no Done channel (no rxgo.WithContext), a plain
// send, which costs less than a select on it.
func (m *mapper) send(item rxgo.Item) bool {
	if m.done == nil {
		m.next <- item
		return true
	}
	select {
	case <-m.done:
		return false
	case m.next <- item:
		return true
	}
}

// checkFinishedLocked signals the end of the output once the acquirer has
// ended and every slot has been sent. Requires m.mu.
func (m *mapper) checkFinishedLocked() {
	if !m.ended && m.acqDone && len(m.slots) == m.head && !m.emitting {
		m.ended = true
		close(m.finished)
	}
}
