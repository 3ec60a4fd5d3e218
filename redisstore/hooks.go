package redisstore

import (
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// hooks are the user's rxthrottle.OnWait and OnAdmit, called as the
// in-memory limiters call them: on the caller's goroutine, with no lock of
// the limiter held (take and allow hold none when they call), a panic
// recovered and logged (limiterkit.CallHook).
type hooks struct {
	onWait, onAdmit func(rxthrottle.Event)
	keyed           bool // Event.Key is the caller's key (Keyed), else ""
}

// admitted counts an admission in s's stats (waited says whether the
// caller waited) and calls OnAdmit. A zero arrived (Allow, which does not
// wait) is read from the clock, only if there is a hook.
func (s *schedule) admitted(key string, arrived time.Time, n int, wait time.Duration, waited bool) {
	s.stats.admit(wait, waited)
	if s.hooks.onAdmit == nil {
		return
	}
	if arrived.IsZero() {
		arrived = s.clock.Now()
	}
	limiterkit.CallHook(s.hooks.onAdmit, rxthrottle.Event{Key: s.hooks.key(key), Arrived: arrived, Wait: wait, N: n})
}

// key is the Event.Key for a caller of key.
func (h *hooks) key(key string) string {
	if h.keyed {
		return key
	}
	return ""
}
