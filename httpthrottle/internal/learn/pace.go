package learn

import (
	"math"
	"time"
)

// The gap a leaky bucket keeps (nginx's limit_req: a request closer than
// W/N to the last one accepted is refused, whatever the window held),
// found from refusals. The run-up's refusal of the first request at a new
// pace is a leaky bucket's (runUpRateLocked): its gap lies between the
// one refused (W/n) and the one before it (W/prevN), accepted, if the
// bucket has no burst. The schedule then goes one request at a time:
// refineHold requests at twice the gap accepted (a bucket with a burst,
// nginx's burst=B nodelay, lets a run-up through faster than its gap
// until the burst is spent, and is full when it refuses: half the pace
// drains it), then each accepted answer shortens the gap, by
// refineFastStep down to the gap accepted (no step crosses it) and by
// refineStep below it, so that the first request sent closer than the
// server's gap is refused, one refusal. Without a burst the last gap
// accepted is the server's, to within the step: it settles there (or just
// above the gap the run-up had refused, if the steps reach it), with a
// round trip on top (a loaded machine reads its clock late, the server
// too). Refused at or above the gap the run-up had accepted, or within
// burstSteps steps below it, the bucket has a burst (one without refuses
// none of those gaps unless its own lies just below the run-up's; a
// burst's refusal falls about the run-up's gap, and a late arrival moves
// it a step or two lower; far lower when the refinement's requests went
// late by two of the run-up's gaps in all, lateLocked), was full at both
// refusals, and let its rate through between them, to within one request: less than one short of full at the
// first and no more than full at the last accepted before the second, it
// leaked at least the k accepted between less one over the time from the
// first refusal's sending to that acceptance's answer, and the gap kept
// is that time over k-1 (never shorter than the bucket's; the second
// refusal's own gap, after the last acceptance, is none of the bucket's).
// A count per window follows the gap (W/gap, rounded up: it never binds
// before the gap, and the window of the rate found holds what the server
// accepts). The bucket counted neither refusal, so the request after
// the second goes the gap settled on after the last accepted answer, the
// count making room for a window for what the refinement sent faster
// (pace_limits.go).
//
// Refused within the hold, the bucket was full at half the run-up's pace,
// and half that pace is kept (no third refusal to tell more). A refusal
// after the gap settled (a burst
// hid the gap from the steps too, or the machine's delays brought two
// requests closer than the gap) widens it by 5%, or to the time between
// the last accepted answer and the refused request's sending if longer
// (the bucket's gap is longer than that), or to the gap at which
// the bucket let requests through between the last two refusals if
// longer: a leaky bucket full at both accepted its rate over the time
// between them (to within one request), whatever its burst, and less if
// it emptied meanwhile; never beyond the window the run-up started from
// (one request per window was accepted) until a gap that long is refused.

const (
	refineStep = 0.98 // each accepted answer of the refinement shortens the gap by 2%
	// refineFastStep is the step above the run-up's gap accepted, where
	// only a bucket with a burst can refuse (see enterRefineLocked).
	refineFastStep = 0.9
	refineHold     = 3    // requests at the run-up's gap accepted before the first step
	spacedBackoff  = 1.05 // a refusal of the gap settled on widens it by at least 5%
	// serverTick is the least the gap settled on is widened by: the
	// server's clock ticks (nginx's in whole milliseconds, the time
	// since the last request truncated), so a gap accepted once may be
	// refused at another phase of its ticks.
	serverTick = time.Millisecond
)

// enterRefineLocked starts the refinement of the gap at the run-up's
// first refusal, read at now, that of the first request at pace n after
// pace prevN was accepted. Requires s.mu.
func (s *learnSchedule) enterRefineLocked(now time.Time) {
	p := &s.probe
	ok := p.w / time.Duration(max(1, p.prevN))
	refused := p.w / time.Duration(max(1, p.n))
	got, _ := s.accepts.since(now.Add(-p.w))
	// The refinement starts at half the pace accepted: a bucket with a
	// burst that the run-up filled refuses any gap shorter than its own,
	// and drains at this one (the run-up went at most twice its rate:
	// above it only the burst let requests through), so that the steps
	// find its gap instead of a refusal at once.
	*p = probeState{phase: probeRefine, n: max(1, p.prevN), w: p.w, pauseEnd: now, refusedAt: now,
		gap: 2 * ok, gapOK: ok, runUpOK: ok, gapRefused: refused, windowCount: got, okSent: p.okSent, okAt: p.okAt, refusedSent: s.sent}
}

// sinceRefusalLocked returns how many requests were accepted since the
// last refusal, and the longest a leaky bucket can have taken to let them
// through: from that refusal's sending (the server saw it no earlier) to
// the last accepted answer (it saw that one no later), exact; or, without
// both readings, the time since the refusal was read. Full at both
// refusals, the bucket's gap is at most span over between less one.
// Requires s.mu.
func (s *learnSchedule) sinceRefusalLocked(now time.Time) (between int, span time.Duration, exact bool) {
	p := &s.probe
	between, _ = s.accepts.since(p.refusedAt)
	if !p.refusedSent.IsZero() && p.okAt.After(p.refusedSent) {
		return between, p.okAt.Sub(p.refusedSent), true
	}
	return between, now.Sub(p.refusedAt), false
}

// paceLocked feeds an answer to the refinement or to the gap settled
// on. Requires s.mu.
func (s *learnSchedule) paceLocked(refused bool, now, pauseEnd time.Time, rtt time.Duration) {
	p := &s.probe
	if refused && now.Before(p.pauseEnd) {
		return // one more answer of a refusal's burst, counted already
	}
	if !refused {
		p.next = 0
		if p.room > 0 && now.Sub(p.refusedAt) >= p.w {
			p.room = 0 // a window after the refusal (uncountLocked)
		}
		if p.phase == probeRefine {
			s.noteUpperLocked(now)
			s.refineStepLocked(rtt)
		}
		p.okAt = now
		return
	}
	between, span, _ := s.sinceRefusalLocked(now)
	since := now.Sub(p.refusedAt)
	p.pauseEnd, p.refusedAt, p.refusedSent = pauseEnd, now, s.sent
	refining := p.phase == probeRefine
	p.next, p.room = 0, 0
	s.refusedLocked(between, span, since, now, pauseEnd, rtt)
	if refining && s.probe.phase == probeSpaced {
		// The refinement's refusal, a leaky bucket's (not a window's):
		// the gap settled on is the bucket's or longer. A refusal of
		// the gap settled on says it is too short, by how much is not
		// known: the next request still waits the gap widened after it.
		s.uncountLocked(now, since)
	}
}

// refusedLocked takes a refusal of the refinement or of the gap settled
// on, read at now, between accepted since the last refusal over span (at
// most) and since after it. Requires s.mu.
func (s *learnSchedule) refusedLocked(between int, span, since time.Duration, now, pauseEnd time.Time, rtt time.Duration) {
	p := &s.probe
	switch {
	case p.phase == probeRefine && p.refined < refineHold:
		// Refused at twice the gap the run-up had accepted: the server
		// was full when the run-up was refused, and refuses a request
		// closer than its gap as long as it stays so.
		if s.refinedWindowLocked(now, pauseEnd, rtt) {
			return
		}
		// A leaky bucket with a burst: half the hold's pace.
		p.gapOK, p.upper = 2*p.gap, 0
		s.settleLocked(rtt)
	case p.phase == probeRefine:
		if s.refinedWindowLocked(now, pauseEnd, rtt) {
			return
		}
		if (p.gap >= burstEdge(p.runUpOK) || s.lateLocked(between, span)) && between > 1 {
			// Refused at a gap longer than the run-up's, accepted: no
			// bucket without a burst refuses it. The bucket was full at
			// both refusals and let between through over span, give or
			// take one request: its gap is at most span/(between-1).
			p.phase = probeSpaced
			p.gap = span / time.Duration(between-1)
			p.n = gapCount(p.w, p.gap)
			return
		}
		s.settleLocked(rtt)
	default:
		gap := time.Duration(float64(p.gap) * spacedBackoff)
		if !s.sent.IsZero() && !p.okAt.IsZero() {
			// The bucket saw this request no earlier than it was sent
			// and the last one accepted no later than its answer was
			// read: its gap is longer than the time between.
			gap = max(gap, s.sent.Sub(p.okAt)+serverTick)
		}
		if between > 0 {
			// At most twice the gap: a client slower than its
			// schedule (a stalled machine) let the bucket empty.
			gap = max(gap, min(since/time.Duration(between), 2*p.gap))
		}
		if p.gap < p.w {
			// Never beyond the window the run-up started from (one
			// request per window, accepted) before that is refused:
			// a longer gap would stall the client beyond the server's
			// real window.
			gap = min(gap, p.w)
		}
		p.gap, p.n = gap, gapCount(p.w, gap)
	}
}

// refinedWindowLocked takes a refusal of the refinement, read at now,
// for a window's if the window before it holds as many accepted as the
// window before the run-up's refusal did: a window that refused at the
// same count twice counts that many (a sliding log, refused first at a
// new pace by chance), and the rate is found from it. Requires s.mu.
func (s *learnSchedule) refinedWindowLocked(now, pauseEnd time.Time, rtt time.Duration) bool {
	p := &s.probe
	got, _ := s.accepts.since(now.Add(-p.w))
	if got != p.windowCount {
		return false
	}
	w := p.w
	s.probe = probeState{}
	s.foundLocked(got, now, pauseEnd, w, rtt)
	return true
}

// refineStepLocked counts an accepted answer of the refinement: after
// the hold, the next gap is a step shorter, and the gap settles when
// the step would reach the one the run-up had refused. Requires s.mu.
func (s *learnSchedule) refineStepLocked(rtt time.Duration) {
	p := &s.probe
	p.gapOK = p.gap
	p.tried += p.gap
	p.refined++
	if p.refined < refineHold {
		return
	}
	next := time.Duration(float64(p.gap) * refineStep)
	if p.gap > p.runUpOK {
		// The fast steps stop at the run-up's gap accepted: a refusal
		// above or at it is a burst's (paceLocked), and one step across
		// it would take a burst's refusal for a bucket's without.
		next = max(time.Duration(float64(p.gap)*refineFastStep), p.runUpOK)
	}
	if next > p.gapRefused {
		p.gap = next
		return
	}
	s.settleLocked(rtt)
}

// noteUpperLocked takes the accepted answer read at now, its request
// sent at s.sent, as a bound on the gap: the server accepted it at least
// its gap after the last one accepted, and it saw that one no earlier
// than it was sent and this one no later than now, so its gap is at most
// the time between. Requires s.mu.
func (s *learnSchedule) noteUpperLocked(now time.Time) {
	p := &s.probe
	if s.sent.IsZero() {
		return
	}
	if !p.okSent.IsZero() {
		if d := now.Sub(p.okSent); d > 0 && (p.upper == 0 || d < p.upper) {
			p.upper = d
		}
	}
	p.okSent = s.sent
}

// settleLocked keeps the last gap accepted, widened by a round trip (the
// moving mean: the gap accepted was one at the server with the round
// trip then on top, and what the machine's and the network's delays add
// to one arrival and not to the next comes off the gap between them), at
// least a tick of the server's clock. Requires s.mu.
func (s *learnSchedule) settleLocked(rtt time.Duration) {
	p := &s.probe
	p.phase = probeSpaced
	p.gap = p.gapOK + max(serverTick, rtt)
	if p.upper > 0 {
		// Without a burst the bucket's gap is at most the shortest
		// time between an accepted request's sending and the next
		// accepted answer: a gap that long is never refused, whatever
		// the round trips do.
		p.gap = max(p.gapOK, p.upper) + serverTick
	}
	p.n = gapCount(p.w, p.gap)
}

// burstSteps is how many of the refinement's steps below the run-up's gap
// accepted a refusal may come and still be taken for a burst's. The
// refinement's hold drains a burst the run-up filled by as little as a
// tenth of a request each (at twice the run-up's gap accepted), the steps
// fill it again, and its refusal falls about the run-up's gap: above it on
// time, one to three steps below it when the run-up's refusal came early
// (a late arrival, on a loaded machine: TestLearnPaceBurstLate). Read as a
// bucket's without a burst, the gap settled on was short and was refused
// again. The cost: a bucket without a burst whose gap lies within these
// steps below the run-up's is kept at what it let through between the
// refusals, slower (BENCHMARKS.md, "httprate's last refusal, and a burst's
// refusal moved by late timers", has the runs and figures of both).
const burstSteps = 3

// burstEdge returns the shortest gap at which the refinement's refusal is
// a burst's: burstSteps steps below ok, the run-up's gap accepted.
func burstEdge(ok time.Duration) time.Duration {
	return time.Duration(float64(ok) * math.Pow(refineStep, burstSteps) * 0.999)
}

// gapCount is the count per window w that a gap between requests keeps:
// w/gap, rounded up (requests a gap apart put no more in any window),
// at least 1.
func gapCount(w, gap time.Duration) int {
	return max(1, int(math.Ceil(float64(w)/float64(max(gap, 1)))))
}
