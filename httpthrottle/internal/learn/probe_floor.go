package learn

import "time"

// A leaky bucket's gap under a rate found from a window's count. A bare
// refusal that falls inside one of the run-up's paces is taken for a
// window's (probe.go): a leaky bucket with a burst (nginx's limit_req
// burst=B nodelay), which the run-up filled, refuses one there too, the
// window before it holding the bucket's rate and its burst. The rate
// found is then above the bucket's, and the spreading is refused again
// and again, 5% slower at each. Whatever the server, though, a bare
// refusal after k accepted since the last one bounds a leaky bucket's
// gap (pace.go): it was full, to within one request, at both refusals,
// so it leaked at least k-1 over the time from the last refusal's
// sending to the last acceptance's answer, and its gap is at most that
// time over k-1. Requests kept that far apart (a floor under the
// spreading, held from the answer) never fill it again, whatever its
// burst; at a window, where the floor is about the spreading's own pace
// or longer, they only go slower. At such a bucket the rate found anew
// from a window's count (refoundLocked: what was accepted since the rate
// was found) can be well below the bucket's own rate (7 per second at 10):
// it is never set below the count a window needs to have accepted the
// last two windows' requests (fitCountLocked), which no window that
// accepted them has less of, so that the floor, not the count, keeps the
// bucket's gap (SPEC.md, Learned quotas).

// floorLocked takes a bare refusal of the rate found, read at now (its
// request sent at s.sent), as a leaky bucket's: the floor is raised to
// what it and the last refusal prove, if two or more were accepted
// between (never beyond the window the rate was found over, as pace.go
// does). Requires s.mu.
func (s *learnSchedule) floorLocked(now time.Time) {
	p := &s.probe
	if between, span, exact := s.sinceRefusalLocked(now); between >= 2 && exact {
		p.floor = max(p.floor, min(span/time.Duration(between-1), p.w))
	}
	p.refusedAt, p.refusedSent = now, s.sent
}

// fitCountLocked returns the least count per window a fixed window, at
// any phase, can have and still have accepted what was accepted in the
// two windows before now (tried every thousandth of the window): a
// sliding-window counter's windows hold no more than its quota either,
// and a sliding log's fewer. A window that accepted those counts at
// least that many: a rate found anew below it (refoundLocked) is a leaky
// bucket's count, whose floor keeps its gap, not a window's. Requires
// s.mu.
func (s *learnSchedule) fitCountLocked(now time.Time) int {
	w := s.probe.w
	ts := s.accepts.within(now.Add(-2*w), now.Add(1))
	if len(ts) == 0 {
		return 0
	}
	step, best := max(w/1000, 1), len(ts)
	for b := ts[0].Add(-w + 1); !b.After(ts[0]); b = b.Add(step) {
		most, start, n := 0, b, 0
		for _, t := range ts {
			for !t.Before(start.Add(w)) {
				start, n = start.Add(w), 0
			}
			n++
			most = max(most, n)
		}
		best = min(best, most)
	}
	return best
}
