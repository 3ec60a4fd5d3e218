package learn

import (
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// How a server counts the quota it announces. A fixed window (GitHub) or
// a sliding log accepts the whole quota in a burst once the window has
// moved on, which the strict sliding window the Transport keeps allows. A
// sliding-window counter (go-chi/httprate and many gateways) estimates the
// window ending now from two fixed windows, prev*(W-d)/W + curr at d into
// the current one, and refuses when the estimate rounds to the quota: it
// carries the last window over, so a burst at a window's start is refused
// although no window held more than the quota. Such a server is called
// evenly instead, at counterShare of its quota.
const (
	countingUnknown = iota
	countingFixed
	countingEstimating
)

// maxBoundaryChecks bounds the window boundaries a schedule watches to
// tell how its server counts: each costs one request at a time for a
// round trip or so, and a server whose answers never tell is left to its
// refusals (a refusal within the announced quota means it estimates).
const maxBoundaryChecks = 4

// maxRenewalChecks bounds the renewals of a spent quota a schedule
// watches when its resets mark no boundary (watchRenewalLocked): each
// costs one round trip of one request at a time, and such a check cannot
// tell a fixed window from a counter whose window is nearly over, so it
// is repeated as the client's phase drifts.
const maxRenewalChecks = 8

// watchBoundaryLocked sets a timer for the next reset of a quota while
// the server's counting is unknown, so that at that boundary requests go
// one at a time until an answer from the new window is read (goAlone,
// judgeBoundaryLocked): without it, the quota's burst would go at the
// boundary, which a fixed window accepts and a sliding-window counter
// refuses. A reset in whole seconds from now (the IETF fields' t) says
// nothing of where a window starts, and is not watched. Requires s.mu.
func (s *learnSchedule) watchBoundaryLocked(l *Learner, now time.Time) {
	if s.counting != countingUnknown || s.checks >= maxBoundaryChecks || !s.boundary.IsZero() {
		return
	}
	for _, q := range s.quotas {
		at, until := q.lastReset, q.maxUntil
		if q.coarse && !at.After(now) && at.After(now.Add(-time.Second)) {
			// A reset in whole seconds at or just behind now is one
			// truncated (httprate's): its boundary is within the second
			// ahead, at the latest a second after the reading.
			at = at.Add(time.Second)
		}
		if q.approx || !at.After(now) || q.limit < 1 {
			continue
		}
		s.boundary = at
		lead := min(until/10, 50*time.Millisecond) // ahead of the tokens that renew at the reset
		if q.coarse {
			// A whole-second reset marks its boundary to within a second:
			// the check starts as early as it can be.
			lead = min(max(until, l.cfg.ProbeWindow)/10, 50*time.Millisecond)
		}
		l.cfg.Clock.AfterFunc(at.Sub(now)-lead, func() { l.goAlone(s, at, until) })
		return
	}
}

// judgeBoundaryLocked reads a, the answer from a new window to the first
// request of it (requests went one at a time from just before the
// boundary), at now: a fixed window counts that request alone (N-1 left);
// a sliding-window counter also counts what it carries over of the last
// window, the q.prevSeen answers it counted there weighted by how much of
// the new window is still ahead. When what it carries over is too little
// to tell (few requests last window, or an answer late in the new one),
// the next boundary is judged. Requires s.mu.
func (s *learnSchedule) judgeBoundaryLocked(q *quotaTrack, a announcement, now time.Time) {
	s.alone, s.boundary, s.checks = false, time.Time{}, s.checks+1
	if a.remaining < 0 {
		s.checks = maxBoundaryChecks // the server does not say what is left: nothing to judge by
		return
	}
	others := float64(a.limit - a.remaining - 1) // what the server counts besides this request
	if q.coarse && q.prevSeen >= 1 && others >= 1 {
		// Resets in whole seconds put the boundary only to within a
		// second (httprate's windows start where its limiter did, its
		// resets are their ends truncated), so what is carried over
		// cannot be worked out from them; but the server counts more
		// than the lone request, which a fixed window does not: it
		// carries the last window over, or others share the quota, and
		// spreading is the safe course either way.
		s.estimatingLocked(now, a.limit)
		return
	}
	window, into := a.reset.Sub(q.prevReset), now.Sub(q.prevReset)
	if q.prevReset.IsZero() || window <= 0 || into < 0 || into >= window {
		return
	}
	carried := float64(q.prevSeen) * float64(window-into) / float64(window)
	switch {
	case carried >= 1 && others >= max(1, carried/2):
		s.estimatingLocked(now, a.limit)
	case carried >= 2:
		s.counting = countingFixed
	}
}

// counterShare is the share of a quota of n per window W at which a
// sliding-window counter never refuses requests that arrive at least
// W/(n*share) apart. Such a counter (go-chi/httprate's: refused when
// round(prev*(W-d)/W + curr)+1 > n) refuses first the first request of a
// window after one that held n; with arrivals s apart, that one arrives at
// least n*s - W into its window, where the estimate n*(1-d) must stay
// below n-1/2: d > W/(2n). A quarter of a request's share more, W/(4n),
// is left for the server's own delays (it reads its clock when it gets to
// the request): s = W*(1 + 0.75/n)/n. For n = 10 it is 93.0% (the first
// request of a window then arrives at least 75 ms in, 25 ms after the
// instant it would be refused); it tends to 1 as n grows.
func counterShare(n int64) float64 {
	if n < 1 {
		return 0.5
	}
	return 1 / (1 + 0.75/float64(min(n, 1<<30)))
}

// boundaryHoldLocked returns how long after a watched boundary requests
// are held back before the one that goes alone: a sliding-window counter
// refuses the first request of a window after a full one until d > W/(2n),
// so the lone request goes W/n in (one request's share), where it is
// accepted and the counter still carries most of the last window over.
// The window is the quota's, or at least LearnProbeWindow while it is not
// known; the hold is never longer than an eighth of the maximum pause, so
// that it and a pause the server asked for just before stay within the
// pause cap together. Requires s.mu.
func (s *learnSchedule) boundaryHoldLocked(until, probeWindow, maxPause time.Duration) time.Duration {
	w, n := s.tightestLocked()
	if n < 1 {
		return 0
	}
	for _, q := range s.quotas {
		if q.window == 0 && q.inferred == 0 {
			w = max(w, until, probeWindow) // the window is a guess: at least the probe's
		}
	}
	return min(w/time.Duration(n), maxPause/8)
}

// ownRenewalLocked returns when the client's own tokens of the window
// ending at a quota's last reset come back, for a quota whose resets are
// whole seconds and whose window's whole quota was accepted: the first of
// its answers read plus the window. Zero if none (a reset to the
// millisecond marks the boundary itself). A reset in whole seconds marks the server's boundary only to
// within a second, and a server whose windows start where its limiter
// started (go-chi/httprate since v0.15: the reset it sends is that
// boundary truncated to a whole second) has its boundary where the
// client's burst began, a window before: the lone request of a boundary
// check then went when the tokens came back, at the very start of the
// server's window, where a sliding-window counter refuses it (a refusal
// and its Retry-After of a whole window at every httprate run). It goes
// most of the hold after this instant instead (goAlone). Requires s.mu.
func (s *learnSchedule) ownRenewalLocked(maxPause time.Duration) time.Time {
	var at time.Time
	for _, q := range s.quotas {
		w, _ := q.effectiveWindow()
		if !q.coarse || w <= 0 || q.limit < 1 || q.firstAt.IsZero() || int64(q.seen) < q.limit {
			continue
		}
		if r := q.firstAt.Add(min(w, maxPause)); r.After(at) {
			at = r
		}
	}
	return at
}

// holdLoneLocked holds a boundary check's lone request back until most of
// the hold after the client's own tokens come back (as goAlone does), for
// a stretch that began before the window's quota was spent: where the
// first answer was read less than the check's lead before a whole-second
// reset, the check began at once and the rest of the quota went one at a
// time in it, so ownRenewalLocked knew nothing when goAlone ran. Its lone
// request then went as the first token came back, which is where
// go-chi/httprate's window began (its limiter started just before the
// first request), and was refused: one refusal, and a Retry-After of a
// whole window, at a limiter started late in a whole second
// (TestLearnAtHttprateVirtual; BENCHMARKS.md, "httprate's last refusal,
// and a burst's refusal moved by late timers"). The stretch is kept a
// window past the new start. Requires s.mu.
func (s *learnSchedule) holdLoneLocked(now time.Time, probeWindow, maxPause time.Duration) {
	renew := s.ownRenewalLocked(maxPause)
	if renew.IsZero() {
		return
	}
	var until time.Duration
	for _, q := range s.quotas {
		until = max(until, q.maxUntil)
	}
	start := renew.Add(s.boundaryHoldLocked(until, probeWindow, maxPause) * 3 / 4)
	if !start.After(now) {
		return
	}
	s.hold = latest(s.hold, start)
	s.aloneUntil = latest(s.aloneUntil, start.Add(min(max(until, probeWindow), maxPause)))
}

// watchRenewalLocked watches a quota whose resets say nothing of where a
// window starts (whole seconds from now, as the IETF fields' t), while
// the server's counting is unknown: when a, the answer read at now, says
// the quota is spent, the Transport pauses until its reset (Read),
// and the tokens of that burst renew a window after their answers. The
// first request after that goes alone (judgeRenewalLocked): nothing else
// of the client's is then in the last window. It sets s.hold, the pause
// the caller makes once s.mu is released. Requires s.mu.
func (s *learnSchedule) watchRenewalLocked(q *quotaTrack, a announcement, now time.Time, maxPause time.Duration) {
	if s.counting != countingUnknown || s.alone || s.checks >= maxRenewalChecks || a.remaining != 0 {
		return
	}
	w, _ := q.effectiveWindow()
	if w <= 0 {
		return
	}
	w = min(w, maxPause)
	// Nothing goes until the renewal (the burst's tokens come back about
	// then anyway), so that the first request after it goes alone.
	s.alone, s.renewal, s.aloneUntil, s.hold = true, now.Add(w), now.Add(2*w), now.Add(w)
}

// judgeRenewalLocked reads a, read at now, the answer to the request that went alone
// once the spent quota's tokens renewed: a fixed window or a sliding log
// counts that request alone, the others having arrived a window before or
// earlier; a sliding-window counter still carries part of the last window
// over (all of it but the part of its own window gone by). Anything
// counted besides the lone request means it estimates (or others share
// the quota: spreading is then the safe course too); nothing tells
// nothing, as a counter whose window is nearly over carries less than
// half a request. Requires s.mu.
func (s *learnSchedule) judgeRenewalLocked(a announcement, now time.Time) {
	s.alone, s.renewal, s.checks = false, time.Time{}, s.checks+1
	if a.remaining < 0 {
		s.checks = maxRenewalChecks
		return
	}
	if a.limit-a.remaining-1 >= 1 {
		s.estimatingLocked(now, a.limit)
	}
}

// estimatingLocked records that the server estimates (a sliding-window
// counter) and spreads the requests at its counterShare of a quota of
// n. Requires s.mu.
func (s *learnSchedule) estimatingLocked(now time.Time, n int64) {
	s.counting = countingEstimating
	if !s.spread.on {
		s.spreadWhy = "the server counted more than the lone request at a window boundary: it carries the last window over"
		share := counterShare(n)
		s.spread = spreadState{on: true, f: share, fmax: share, changed: now, pauseEnd: now}
	}
}

// limiter returns the Limiter s sets limits on: its own Bucket, or the
// Transport's limiter.
func (s *learnSchedule) limiter(l *Learner) rxthrottle.Limiter {
	if s.own != nil {
		return s.own
	}
	return l.cfg.Single
}
