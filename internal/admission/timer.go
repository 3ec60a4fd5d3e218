package admission

import (
	"time"

	"github.com/benbjohnson/clock"
)

// Timer is the only place where "the next token is free at T" becomes a
// wake-up on the limiter's clock. It owns at most one timer for its
// limiter, however many callers wait, so the cost per caller does not
// grow with N or with the queue. It is not safe for concurrent use: the
// limiter's lock guards it, and the wake-up function takes that lock
// itself. The zero Timer is disarmed.
type Timer struct {
	timer *clock.Timer // made on first use: an idle key of a Keyed costs none
	at    int64        // the armed wake-up, as an offset
	armed bool
}

// WakeAt arranges for p.Wake to run at offset at, which is d from now, on
// p's clock. Re-arming for the instant already armed is free. A wake-up
// that was superseded may still run Wake once; Wake must re-check the
// state.
func (s *Timer) WakeAt(p Planner, at int64, d time.Duration) {
	if s.armed && s.at == at {
		return
	}
	s.at, s.armed = at, true
	if s.timer == nil {
		s.timer = p.Clock().AfterFunc(d, p.Wake)
		return
	}
	s.timer.Reset(d)
}

// Disarm forgets the wake-up.
func (s *Timer) Disarm() {
	if !s.armed {
		return
	}
	s.armed = false
	s.timer.Stop()
}

// Expired marks the armed wake-up as spent if it is due at now; the
// wake-up function calls it before it re-plans. A superseded, early
// wake-up leaves the armed one in place.
func (s *Timer) Expired(now int64) {
	if s.at <= now {
		s.armed = false
	}
}
