package rxthrottle

import (
	"context"

	"github.com/reactivex/rxgo/v2"
)

// The mapper's acquirer: it reads the source, takes a token for each item
// in order and queues its call; and the slots and backlog it keeps.
// operator_map.go has the operators and the mapper's state.

// acquire is the acquirer's loop.
func (m *mapper) acquire(ctx context.Context, in <-chan rxgo.Item) {
	defer func() {
		m.mu.Lock()
		m.acqDone, m.roomWait = true, false // so that roomLocked no longer wakes it
		m.checkFinishedLocked()
		m.sleepUnlock()
	}()
	seq := 0
	full := false // the backlog was full at the last add
	for {
		var item rxgo.Item
		var ok bool
		select { // without a select on ctx when an item is there
		case item, ok = <-in:
		default:
			// ctx, the source's, ends only with m.ctx while the acquirer
			// runs (runMap cancels it once the acquirer has ended), so it
			// waits on m.done: nil without rxgo.WithContext, and then a
			// plain receive, which costs less than a select.
			if m.done == nil {
				item, ok = <-in
				break
			}
			select {
			case <-m.done:
				return
			case item, ok = <-in:
			}
		}
		if !ok {
			return
		}
		seq++
		if item.Error() { // no token, no call
			m.mu.Lock()
			m.addLocked(item, true)
			m.emitLocked(false)
			full = m.backlogLocked() >= mapBacklog
			m.mu.Unlock()
			continue
		}
		if full && !m.waitRoom(ctx) {
			return
		}
		tok, deadline, err := m.grant(ctx, seq)
		if err != nil {
			if !stopped(ctx) {
				m.mu.Lock()
				m.addLocked(rxgo.Error(err), true)
				m.emitLocked(false)
				m.mu.Unlock()
			}
			return
		}
		m.mu.Lock()
		if m.stop {
			m.mu.Unlock()
			_ = m.endHold(seq, tok, false)
			return
		}
		slot := m.addLocked(rxgo.Item{}, false)
		if m.jobHead > 32 && m.jobHead*2 > len(m.jobs) { // reclaim the taken front
			k := copy(m.jobs, m.jobs[m.jobHead:])
			clear(m.jobs[k:])
			m.jobs, m.jobHead = m.jobs[:k], 0
		}
		m.jobs = append(m.jobs, mapJob{slot: slot, seq: seq, v: item.V, tok: tok, deadline: deadline})
		if m.free == 0 {
			m.helperLocked()
		}
		full = m.backlogLocked() >= mapBacklog
		m.sleepUnlock() // it may block on in next
	}
}

// grant takes a token of m.l for item seq, as token does, and returns it
// with fn's deadline, as an offset from m.epoch: the hold timeout after
// the grant. A token of a *Bucket free at once comes with the clock
// reading it departed at, under the Bucket's lock, an offset from the
// Bucket's base, which is m.epoch: so the deadline is its hold's own, with
// no clock read of the mapper's and no conversion; any other grant is
// followed by a reading, no earlier than the departure.
func (m *mapper) grant(ctx context.Context, seq int) (Token, int64, error) {
	if b, ok := m.l.(*Bucket); ok {
		if tok, at, ok := b.acquireFree(ctx); ok {
			return tok, addSat(at, int64(m.holdTimeout)), nil
		}
		m.mu.Lock()
		m.sleepUnlock() // it may wait for the token
	}
	tok, err := m.token(ctx, seq)
	return tok, addSat(m.nowOff(), int64(m.holdTimeout)), err
}

// token takes a token of m.l for item seq, turning a failure or a panic of
// the Limiter into the error to emit.
func (m *mapper) token(ctx context.Context, seq int) (tok Token, err error) {
	defer func() {
		if r := recover(); r != nil {
			tok, err = Token{}, recovered(r, m.op+": the Limiter", seq)
		}
	}()
	tok, err = m.l.Acquire(ctx)
	if err != nil {
		return Token{}, errNoToken(m.op, seq, err)
	}
	return tok, nil
}

// backlogLocked returns how many items wait for the downstream or for a
// worker: the complete slots at the head and the queued jobs. Requires m.mu.
func (m *mapper) backlogLocked() int { return m.ready + len(m.jobs) - m.jobHead }

// roomLocked wakes the acquirer if it waits for the backlog to go down and
// it has. Requires m.mu.
func (m *mapper) roomLocked() {
	if m.roomWait && m.backlogLocked() < mapBacklog {
		m.roomWait = false
		m.acqAwake = m.lazy // the watchdog may wait for it (operator_map_guard.go)
		select {
		case m.room <- struct{}{}:
		default:
		}
	}
}

// waitRoom waits while mapBacklog items wait for the downstream or for a
// worker. It returns false if ctx ended or the output is closing.
func (m *mapper) waitRoom(ctx context.Context) bool {
	for {
		m.mu.Lock()
		if m.closed || m.backlogLocked() < mapBacklog {
			closed := m.closed
			m.mu.Unlock()
			return !closed
		}
		m.roomWait = true
		m.sleepUnlock()
		select {
		case <-ctx.Done():
			return false
		case <-m.room:
		}
	}
}

// addLocked appends a slot for item, complete or not, and returns it. A
// complete slot extends the complete prefix. Requires m.mu.
func (m *mapper) addLocked(item rxgo.Item, done bool) *mapSlot {
	var s *mapSlot
	if n := len(m.spare); n > 0 {
		s = m.spare[n-1]
		m.spare = m.spare[:n-1]
	} else {
		s = new(mapSlot)
	}
	s.item, s.done = item, done
	if m.head > 32 && m.head*2 > len(m.slots) { // reclaim the sent front
		k := copy(m.slots, m.slots[m.head:])
		clear(m.slots[k:])
		m.slots = m.slots[:k]
		m.head = 0
	}
	m.slots = append(m.slots, s)
	if done && m.ready == len(m.slots)-m.head-1 {
		m.ready++
	}
	return s
}
