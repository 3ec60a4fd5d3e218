package marble

import (
	"fmt"
	"testing/synctest"
)

// schedule queues the sending of the events that share event i's instant;
// it requires that s.mu is held. Each instant schedules the next, so the
// queue holds one action per source, however long its marble.
func (c *chanSource[E]) schedule(i int) {
	s := c.s
	s.schedule(c.origin+c.events[i].at, classEmission, c.seq, func() { c.emit(i) })
}

// emit runs on the driver: it sends the events that share event i's
// instant.
func (c *chanSource[E]) emit(i int) {
	s := c.s
	j := i
	for j < len(c.events) && c.events[j].at == c.events[i].at {
		j++
	}
	if j < len(c.events) {
		s.mu.Lock()
		c.schedule(j)
		s.mu.Unlock()
	}
	for k := i; k < j; k++ {
		e := c.events[k]
		if k > i {
			// Let the receiver of the value before this one (of a group)
			// take it in and come back, as between any two actions.
			synctest.Wait()
		}
		s.mu.Lock()
		if c.closed {
			s.mu.Unlock()
			return
		}
		if c.sending {
			// Behind a value that waits for its receiver.
			c.backlog = append(c.backlog, c.events[k:j]...)
			s.mu.Unlock()
			return
		}
		if e.close {
			c.closeLocked()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case c.ch <- e.value:
			continue
		default:
		}
		if c.hot {
			full := ""
			if cap(c.ch) > 0 {
				full = fmt.Sprintf(" and its buffer of %d was full", cap(c.ch))
			}
			s.logAt(c.caller, "marble: %s dropped %c at %s: no receiver was ready%s", c.api, e.symbol, when(c.origin+e.at, s.frame), full)
			continue
		}
		s.mu.Lock()
		c.backlog = append(c.backlog, c.events[k:j]...)
		c.sending = true
		s.mu.Unlock()
		go c.send()
		return
	}
}

// send runs on a goroutine of a cold source while values wait for their
// receiver: it sends the backlog in order, blocking as a sender does, and
// ends when the backlog is empty, or closes the channel at its | or when
// Run ends.
func (c *chanSource[E]) send() {
	s := c.s
	for {
		s.mu.Lock()
		if len(c.backlog) == 0 {
			c.sending = false
			if s.ctx.Err() != nil {
				// Run ended while the last value was being taken; the
				// close Run does skipped this channel (it was sending).
				c.closeLocked()
			}
			s.mu.Unlock()
			return
		}
		e := c.backlog[0]
		c.backlog = c.backlog[1:]
		if e.close {
			c.sending, c.backlog = false, nil
			c.closeLocked()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case c.ch <- e.value:
		case <-s.ctx.Done():
			s.mu.Lock()
			c.sending, c.backlog = false, nil
			c.closeLocked()
			s.mu.Unlock()
			return
		}
	}
}

// closeLocked closes the channel unless it is closed already; it requires
// that s.mu is held.
func (c *chanSource[E]) closeLocked() {
	if !c.closed {
		c.closed = true
		close(c.ch)
	}
}
