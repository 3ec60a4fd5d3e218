package rxthrottle

import (
	"time"

	"github.com/benbjohnson/clock"
)

// scheduler is the only place where "the next token is free at T" becomes a
// wake-up on the injected clock. It owns at most one timer for its limiter,
// however many callers wait, so the cost per item does not grow with N or
// with the queue. It is not safe for concurrent use: the bucket's lock
// guards it, and the bucket's wake takes that lock itself.
type scheduler struct {
	timer *clock.Timer // made on first use: an idle key of a Keyed costs none
	at    int64        // the armed wake-up, as a window offset
	armed bool
}

// wakeAt arranges for b.wake to run at offset at, which is d from now.
// Re-arming for the instant already armed is free. A wake-up that was
// superseded may still run wake once; wake re-checks the state.
func (s *scheduler) wakeAt(b *Bucket, at int64, d time.Duration) {
	if s.armed && s.at == at {
		return
	}
	s.at, s.armed = at, true
	if s.timer == nil {
		s.timer = b.hooks.clock.AfterFunc(d, b.wake)
		return
	}
	s.timer.Reset(d)
}

// disarm forgets the wake-up.
func (s *scheduler) disarm() {
	if !s.armed {
		return
	}
	s.armed = false
	s.timer.Stop()
}

// expired marks the armed wake-up as spent if it is due at now; wake calls
// it before it re-plans. A superseded, early wake-up leaves the armed one in
// place.
func (s *scheduler) expired(now int64) {
	if s.at <= now {
		s.armed = false
	}
}
