package learn

import "time"

// The limits of a leaky bucket's gap (pace.go), the request after the
// refinement's refusal, which the bucket did not count, and a refinement
// whose requests went late.

// uncountLocked makes the next request's gap, after the refinement's
// refusal read at now (since after the refusal before it), count from the
// last accepted answer rather than from this one: a leaky bucket counts no
// request it refuses (nginx's limit_req keeps its excess and its last time
// as they were), so the request after a refusal is as far from the last
// one the bucket counted as the gap says when it leaves that gap after the
// last accepted answer. Without the one-off gap it left the gap after the
// refusal's answer, a refused request's gap later than the bucket needed.
// For a window from now, the count per window also makes room for what the
// last window held (the refinement's steps, faster than the gap settled on
// with a burst, and the refusals, which the client counts and the bucket
// does not): the gap, not the count, keeps a leaky bucket's. The run-up's
// refusal keeps its gap from its own answer: the refinement's hold drains
// a burst by the time since that refusal, and going a refused request's
// gap sooner drained less (its refusal came a step earlier at nginx's
// burst=5, one acceptance fewer between them, and the gap they prove was
// longer: BENCHMARKS.md, "nginx `limit_req` without a burst: where the
// time goes"). Requires s.mu.
func (s *learnSchedule) uncountLocked(now time.Time, since time.Duration) {
	p := &s.probe
	p.next, p.room = 0, 0
	if p.okAt.IsZero() || !now.After(p.okAt) {
		return
	}
	held, _ := s.accepts.since(now.Add(-p.w))
	held++ // this refusal
	if since < p.w {
		held++ // and the one before
	}
	p.next, p.room = max(p.gap-now.Sub(p.okAt), time.Nanosecond), held+1
}

// paceLimits adds the limits of the refinement or of the gap settled on:
// the count per window, and one request per gap (held: the gap counts
// from the answer, so arrivals are never closer than it). It returns the
// reason to report. Requires s.mu.
func (s *learnSchedule) paceLimits(add func(int64, time.Duration)) (reason string) {
	p := &s.probe
	if p.phase == probeRefine {
		// The count of the gap refused: it never binds before the gap.
		add(int64(gapCount(p.w, p.gapRefused)), p.w)
		add(1, p.nextGap())
		return "nothing published: a leaky bucket's gap refined, one request at a time"
	}
	add(int64(max(p.n, p.room)), p.w)
	add(1, p.nextGap())
	return "nothing published: a leaky bucket's gap found from refusals"
}

// nextGap returns the gap of the next request: the one-off gap after a
// refusal the bucket did not count (uncountLocked), else the gap.
func (p *probeState) nextGap() time.Duration {
	if p.next > 0 {
		return p.next
	}
	return p.gap
}

// lateLocked reports whether the refinement's requests, between accepted
// over span since the run-up's refusal was sent, went late by twice the
// run-up's gap accepted or more in all: sent later than their gaps (timers
// late on a loaded machine) or answered later than the shortest round trip
// (a slow network, a late server). Each late request let a bucket with a
// burst drain (its gap is longer than the run-up's, which only the burst
// let through, and at most twice it, as the hold takes it), the steps then
// went on below the run-up's gap without a refusal, and the refusal, far
// below it, looked like a bucket's without a burst: the gap settled on was
// refused again. The gap the arrivals prove (span over between less one)
// holds at any leaky bucket, with a burst or without; without one it is
// slower than the gap refined, as late (BENCHMARKS.md, "nginx `limit_req`
// without a burst: where the time goes", has the runs and figures).
// Requires s.mu.
func (s *learnSchedule) lateLocked(between int, span time.Duration) bool {
	p := &s.probe
	late := span - p.tried - time.Duration(between+1)*p.rttLow
	return late >= 2*p.runUpOK
}
