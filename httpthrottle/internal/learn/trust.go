package learn

import "time"

// Evidence before trust. An announced quota is a hypothesis the answers
// check: a server that refuses although the client sent less than the
// quota it announced, and says some of it is still left, announces what
// it does not enforce (GitHub's secondary limits look like this: a 429
// while X-RateLimit-Remaining is in the thousands). No honest server
// refuses so: a fixed window or a sliding log refuses only with the quota
// in its window, a sliding-window counter only when its estimate,
// prev*(W-d)/W + curr, at most what it accepted in the last two windows,
// reaches the quota; and either says nothing is left. From the first such
// refusal the schedule stops trusting the announced numbers above what was
// accepted: it keeps the rate found from refusals, as with no headers,
// starting from what was accepted in the window before the refusal, spread
// evenly. A liar so costs the refusals of its first burst (the requests in
// flight then) and, after that, what finding the rate from refusals costs.
// The distrust lasts as long as the schedule.

// trustedLocked reports whether the schedule keeps its announced quotas.
// Requires s.mu.
func (s *learnSchedule) trustedLocked() bool {
	return !s.distrusted && s.announcedLocked()
}

// claimsLeft reports whether every quota a refusal announced says some of
// it is left (a quota whose remaining is not sent claims nothing).
func claimsLeft(anns []announcement) bool {
	for _, a := range anns {
		if a.remaining < 1 {
			return false
		}
	}
	return len(anns) > 0
}

// refusedInsideLocked reports whether a refusal at now came inside the
// tightest announced quota: fewer than N-1 answers accepted in the last
// two of its windows, where even a sliding-window counter carries less
// than the quota. Requires s.mu.
func (s *learnSchedule) refusedInsideLocked(now time.Time) bool {
	w, n := s.tightestLocked()
	if w <= 0 || n < 2 {
		return false
	}
	got, ok := s.accepts.since(now.Add(-2 * w))
	return ok && int64(got)+1 < n
}

// distrustLocked makes the schedule keep the rate found from refusals from
// now on, starting at what was accepted in the window before the refusal.
// Requires s.mu.
func (s *learnSchedule) distrustLocked(now, pauseEnd time.Time, probeWindow, rtt time.Duration) {
	s.distrusted, s.claimsLeft = true, false
	s.counting, s.alone, s.boundary, s.renewal = countingEstimating, false, time.Time{}, time.Time{}
	w := max(probeWindow, pauseEnd.Sub(now))
	got, _ := s.accepts.since(now.Add(-w))
	s.probe = probeState{recent: s.accepts}
	s.foundLocked(got, now, pauseEnd, probeWindow, rtt)
}

// The trust ramp. An announcement is believed as far as the answers bear
// it out: the requests in flight on a trusted quota are at most the
// answers it accepted so far, in powers of two (1, 2, 4, ...: a slow start
// clocked by the answers, not by windows), until that reaches the quota's
// N. An honest server costs a few round trips; a liar announcing far more
// than it accepts meets its first refusal with at most what it accepted
// in flight, not every worker: the refusals of its first burst are bounded
// by what it accepts (at most its real N of a window), not by the
// concurrency.

// rampLocked counts an accepted answer of a trusted quota and doubles the
// cap when the answers accepted reach it. Requires s.mu.
func (s *learnSchedule) rampLocked(refused bool) {
	if refused || !s.trustedLocked() {
		return
	}
	s.rampGot++
	if s.inFlight == 0 {
		s.inFlight = 1
	}
	for s.rampGot >= 2*s.inFlight {
		s.inFlight *= 2
	}
}

// inFlightCapLocked returns the trust ramp's cap on requests in flight, 0
// for none: the quota is not trusted, or the cap reached its N. Requires
// s.mu.
func (s *learnSchedule) inFlightCapLocked() int {
	if s.inFlight == 0 || !s.trustedLocked() {
		return 0
	}
	if _, n := s.tightestLocked(); int64(s.inFlight) >= n {
		return 0
	}
	return s.inFlight
}
