package rxthrottle

import (
	"time"

	"github.com/benbjohnson/clock"
)

// scheduler is the only place where "the next token is free at T" becomes a
// wake-up on the injected clock. It owns at most one timer for its limiter,
// however many callers wait, so the cost per item does not grow with N or
// with the queue. It is not safe for concurrent use: the limiter's lock
// guards it, and fire must take that lock itself.
type scheduler struct {
	clock clock.Clock
	fire  func() // called on the timer's goroutine when a wake-up is due
	timer *clock.Timer
	at    time.Time // the armed wake-up; zero when disarmed
}

// wakeAt arranges for fire to run at t (now being the clock's current time).
// Re-arming for the instant already armed is free. A wake-up that was
// superseded may still run fire once; fire must re-check the state.
func (s *scheduler) wakeAt(now, t time.Time) {
	if !s.at.IsZero() && s.at.Equal(t) {
		return
	}
	s.at = t
	d := t.Sub(now)
	if s.timer == nil {
		s.timer = s.clock.AfterFunc(d, s.fire)
		return
	}
	s.timer.Reset(d)
}

// disarm forgets the wake-up. Requires the limiter's lock.
func (s *scheduler) disarm() {
	if s.at.IsZero() {
		return
	}
	s.at = time.Time{}
	s.timer.Stop()
}

// expired marks the armed wake-up as spent if it is due at now; fire calls
// it, under the lock, before it re-plans. A superseded, early wake-up leaves
// the armed one in place.
func (s *scheduler) expired(now time.Time) {
	if !s.at.After(now) {
		s.at = time.Time{}
	}
}
