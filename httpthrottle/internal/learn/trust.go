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
