package redisstore

import (
	"errors"

	"github.com/rxthrottle/rxthrottle"
)

// enterGate lets the caller through WithAdaptiveConcurrency's cap
// (capgate.go), if the schedule has one: a caller that would wait there
// is refused by the queue bound as any waiter, and counts as waiting
// (waitAtGate).
func (c *taker) enterGate() error {
	s := c.s
	if s.gates == nil {
		return nil
	}
	var full bool
	sl, err := s.gates.enter(c.ctx, c.keys[0], c.who, c.hold, func() error {
		if !c.waitAtGate() {
			full = true
			return refuse.QueueFull(c.op, s.queueBound)
		}
		c.gated = true
		return nil
	})
	switch {
	case full:
		s.stats.refuse()
	case err != nil:
		s.stats.cancel()
	}
	c.place = sl
	return err
}

// statsOf returns the counters, with the cap on holds open of the schedule
// stored under key, if any (capOf).
func (s *schedule) statsOf(key string) rxthrottle.Stats {
	st := s.stats.snapshot()
	st.ConcurrencyCap = s.capOf(key)
	return st
}

// checkLeaseAdaptive refuses WithLease with WithAdaptiveConcurrency, as
// checkLease refuses WithConcurrency.
func checkLeaseAdaptive(cfg config) error {
	if cfg.adaptMax > 0 {
		return errors.New("redisstore: WithLease with WithAdaptiveConcurrency: leased tokens do not count holds")
	}
	return nil
}
