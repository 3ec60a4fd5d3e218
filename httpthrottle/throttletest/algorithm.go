package throttletest

import (
	"math"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// rollLocked moves the fixed windows of the first limit on to now's.
// It requires h.mu to be held.
func (h *Handler) rollLocked(now time.Time) {
	w := h.limits[0].Window
	start := now.Truncate(w)
	if start.Equal(h.winStart) {
		return
	}
	if start.Equal(h.winStart.Add(w)) {
		h.prev = h.curr
	} else {
		h.prev = 0
	}
	h.curr, h.winStart = 0, start
}

// estimateLocked is the sliding-window counter's estimate of the arrivals
// in the window ending now. It requires h.mu to be held.
func (h *Handler) estimateLocked(now time.Time) float64 {
	w := h.limits[0].Window
	d := now.Sub(h.winStart)
	return float64(h.prev)*float64(w-d)/float64(w) + float64(h.curr)
}

// firstWaitLocked decides the first limit by the Handler's algorithm: the
// wait it asks for (0: the request fits), and the limits still to check
// on the sliding log. It requires h.mu to be held.
func (h *Handler) firstWaitLocked(now time.Time) (time.Duration, []rxthrottle.Limit) {
	first := h.limits[0]
	switch h.algorithm {
	case FixedWindow:
		if h.curr >= first.N {
			return h.winStart.Add(first.Window).Sub(now), h.limits[1:]
		}
		return 0, h.limits[1:]
	case SlidingWindowCounter:
		if int(math.Round(h.estimateLocked(now)))+1 > first.N {
			return first.Window, h.limits[1:] // httprate's Retry-After: the whole window
		}
		return 0, h.limits[1:]
	}
	return 0, h.limits
}

// quotaLocked is what the answer to the arrival at now announces of the
// first limit. It requires h.mu to be held.
func (h *Handler) quotaLocked(now time.Time) quotaState {
	first := h.limits[0]
	st := quotaState{limit: first.N, window: first.Window}
	switch h.algorithm {
	case FixedWindow:
		st.remaining, st.reset = first.N-h.curr, h.winStart.Add(first.Window)
	case SlidingWindowCounter:
		st.remaining, st.reset = first.N-int(math.Round(h.estimateLocked(now))), h.winStart.Add(first.Window)
	default:
		st.reset = now
		in := 0
		for i := len(h.accepted) - 1; i >= 0 && h.accepted[i].After(now.Add(-first.Window)); i-- {
			in++
			st.reset = h.accepted[i].Add(first.Window)
		}
		st.remaining = first.N - in
	}
	st.remaining = max(0, st.remaining)
	return st
}
