package learn

import "time"

// quotaTrack is one announced request quota and what was inferred of its
// window.
type quotaTrack struct {
	name      string
	limit     int64
	window    time.Duration // as announced; 0 if the server did not say
	minWindow time.Duration // the shortest window the dialect allows (announcement.minWindow)
	coarse    bool          // resets in whole Unix seconds
	approx    bool          // resets in whole seconds from now: no boundary to watch
	lastReset time.Time
	lastLate  time.Duration // how late lastReset may have been read (announcement.late)
	maxUntil  time.Duration // the longest time to a reset seen: the window is at least this
	inferred  time.Duration // the gap between two successive resets, 0 until seen
	spread    time.Duration // how far readings of one reset differed: the network's jitter
	floor     time.Duration // the shortest stand-in window (LearnProbeWindow); 0 for none

	// The accepted answers that carried lastReset (the server counted them
	// in the window ending there), and those of the window before, which
	// ended at prevReset: what a sliding-window counter carries over.
	seen, prevSeen int
	prevReset      time.Time
	firstAt        time.Time // when the first accepted answer carrying lastReset was read; zero if none
	minSent        time.Time // the earliest send of the accepted requests whose answers carried lastReset; zero if none

	// The check of whole-second resets (track_early.go): the window it
	// found, every request of a window had left that soon after its
	// first (0 if none), and the least time from an accepted request's
	// send to the reset its answer carried (0 before any, -1 for none or
	// less).
	arrivals time.Duration
	minSpan  time.Duration
}

// observe updates the track from a fresh announcement a at now (the
// answer to an accepted request unless refused), and reports whether its
// reset moved on to a new window.
func (q *quotaTrack) observe(a announcement, now time.Time, refused bool) (jumped bool) {
	q.limit, q.window, q.minWindow, q.coarse, q.approx = a.limit, a.window, a.minWindow, a.coarse, a.approx
	if a.reset.IsZero() {
		return false
	}
	counted := 1
	if refused {
		counted = 0
	} else if span := a.reset.Sub(now.Add(-a.late)); q.minSpan == 0 || span < q.minSpan {
		q.minSpan = max(span, -1)
	}
	until := a.reset.Sub(now)
	if a.coarse && until <= 0 && until > -time.Second {
		// A reset in whole seconds at or just before now is one
		// truncated (httprate's): it comes within the second ahead. It
		// stands for a window as much as one just ahead does (the floor,
		// LearnProbeWindow, until the reset moves on), not for none.
		until = time.Nanosecond
	}
	if until > q.maxUntil {
		q.maxUntil = until
	}
	switch {
	case q.lastReset.IsZero() || a.reset.Before(q.lastReset.Add(-q.jitter())):
		// The first reset, or one that went back: start over.
		q.lastReset, q.lastLate, q.seen, q.prevSeen, q.prevReset = a.reset, a.late, counted, 0, time.Time{}
		q.firstAt, q.minSent = firstAt(now, counted), firstAt(now.Add(-a.late), counted)
	case a.reset.Add(-a.late).After(q.lastReset.Add(q.jitter())):
		// The reset moved on: a new window, even if this reading was as
		// late as its round trip (a reset relative to the server's now,
		// read late, looks later than it is: issue 28, a first answer
		// read 528 ms late under load looked like the next window's, 10
		// per 718 ms was learned of 10 per 1 s and 11 arrived in 850 ms
		// at TestLearnLoopbackCounter/discord). A gap shorter than the time
		// to a reset seen before is no window of a fixed-window server (a
		// token bucket's reset moves by bits): it is not taken. A reading
		// is never early, and late by up to its answer's round trip (a
		// reset relative to the server's now, read against ours): the
		// last reset, read that late, makes the gap short by as much, so
		// the window taken is the gap plus that round trip (issue 28: 10
		// per 982 ms learned of 10 per 1 s under load let 11 arrive in
		// 992 ms).
		// Nor is a gap more than twice the longest time to a reset seen
		// (SPEC.md, "Learned quotas")
		// (the client was idle across windows: a gap of ten minutes after
		// one window of a second was kept as the window, ten minutes),
		// nor, for whole-second resets, which may be truncated, more than
		// a second more than it (ulule/limiter's, read 68-223 ms ahead at
		// each answer of a 1 s window: every gap of a second was taken
		// for idle time, and the first gap of two, a truncation's, was
		// kept, 10 per 2 s).
		if gap := a.reset.Sub(q.lastReset); gap*10 >= q.maxUntil*9 && gap <= max(2*q.maxUntil, q.maxUntil+q.truncation())+q.jitter() && (q.inferred == 0 || gap+q.lastLate < q.inferred) {
			q.inferred = gap + q.lastLate
		}
		q.prevReset, q.prevSeen = q.lastReset, q.seen
		q.lastReset, q.lastLate, q.seen = a.reset, a.late, counted
		q.firstAt, q.minSent = firstAt(now, counted), firstAt(now.Add(-a.late), counted)
		return true
	default:
		// The same window. A reading later than the last by no more than
		// its own round trip may just have been read late: only the rest
		// is the network's jitter.
		later := a.reset.Sub(q.lastReset)
		if later > 0 {
			later = max(0, later-a.late)
		}
		q.spread = max(q.spread, later, q.lastReset.Sub(a.reset))
		q.seen = min(q.seen+counted, 1<<20)
		if q.firstAt.IsZero() {
			q.firstAt = firstAt(now, counted)
		}
		if sent := now.Add(-a.late); counted == 1 && (q.minSent.IsZero() || sent.Before(q.minSent)) {
			q.minSent = sent
		}
	}
	return false
}

// firstAt is now if an answer read then was counted, else zero.
func firstAt(now time.Time, counted int) time.Time {
	if counted == 0 {
		return time.Time{}
	}
	return now
}

// truncation is how much shorter than the server's time to its reset a
// reading may be: a second for whole Unix seconds, which may be
// truncated (ulule/limiter's, go-chi/httprate's), none otherwise.
func (q *quotaTrack) truncation() time.Duration {
	if q.coarse {
		return time.Second
	}
	return 0
}

// jitter is how far two readings of one reset may differ: a second for
// whole Unix seconds, else the network's say of a few milliseconds.
func (q *quotaTrack) jitter() time.Duration {
	if q.coarse {
		return time.Second / 2
	}
	return max(5*time.Millisecond, q.maxUntil/20)
}

// effectiveWindow returns the window to keep the quota over, and a reason
// when it is a guess; 0 when none is known yet. It is never shorter than
// the dialect's minWindow.
func (q *quotaTrack) effectiveWindow() (time.Duration, string) {
	w, why := q.inferredWindow()
	if q.minWindow > w {
		return q.minWindow, "the dialect's documented window: its resets say less"
	}
	return w, why
}

// inferredWindow is effectiveWindow before the dialect's minWindow.
func (q *quotaTrack) inferredWindow() (time.Duration, string) {
	if q.window > 0 {
		return q.window, ""
	}
	if q.arrivals > 0 {
		// An upper bound of the window, whatever the resets say.
		return q.arrivals, "window found by a window's last request held back: its whole-second resets overstate it"
	}
	if q.inferred > 0 {
		w := q.inferred
		if !q.coarse {
			// Two readings of successive resets may each be off by the
			// jitter: the window is never taken short.
			w += 2*q.spread + w/100
		}
		return max(w, q.maxUntil), "window inferred from successive resets"
	}
	if q.maxUntil > 0 {
		// Until the reset moves on, the time to it covers the rest of the
		// server's current window: no more than the quota goes before the
		// reset, and the next window is the server's next. It is never
		// shorter than the floor: a first answer read late in the
		// server's window (a slow first round trip, a loaded machine)
		// would otherwise let a quota go in the little left of it and
		// another just after the reset, before an answer from the new
		// window is read: twice the quota in a short stretch, which an
		// exact window refuses.
		return max(q.maxUntil, q.floor), "window not yet known: the time to the reset (at least LearnProbeWindow) stands in"
	}
	return 0, ""
}
