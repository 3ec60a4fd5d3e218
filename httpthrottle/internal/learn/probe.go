package learn

import "time"

// A rate found from 429s (see WithLearnLimits): how a schedule with
// nothing published finds the highest rate a server accepts, by a paced
// run-up to its first refusal. The spreading that follows is in
// probe_spread.go, the acceptances it counts in probe_accepts.go, a leaky
// bucket's gap in pace.go.

// probeState finds a rate from 429s when nothing is published. See
// WithLearnLimits for the rules.
type probeState struct {
	phase    int // probeOff, probeSlowStart, probeFound, probeRefine, probeSpaced
	n        int
	w        time.Duration
	accepted int       // accepted in this run-up
	atN      int       // accepted since n last rose (the run-up's pace)
	prevN    int       // n before it last rose: the last pace accepted
	episode  time.Time // the first acceptance of this run-up
	pauseEnd time.Time // refusals before it belong to the refusal that set it
	foundAt  time.Time // the refusal the rate was found at (probe_full.go)
	fullHeld bool      // the rule of a fixed window found full was applied
	recent   acceptLog // once found: when the last answers were accepted

	// A leaky bucket's gap (pace.go): the gap tried, the last accepted,
	// the run-up's refused, the refinement's steps accepted, what the
	// window before the run-up's refusal accepted, and the longest the
	// gap can be by the refinement's accepted pairs (upper, 0 if none).
	gap, gapOK, gapRefused time.Duration
	runUpOK                time.Duration // the run-up's last gap accepted
	refined                int
	windowCount            int       // accepted in the window before the run-up's refusal
	refusedAt              time.Time // the last refusal
	refusedSent            time.Time // when the last refused request was sent
	okSent                 time.Time // when the last request accepted was sent
	okAt                   time.Time // when the last accepted answer was read
	upper                  time.Duration
	// next is the gap of the next request only, from the answer of a
	// refusal the bucket did not count (0 if none): the rest of the gap
	// from the last accepted answer (pace.go, uncountLocked).
	next time.Duration
	// tried is the sum of the gaps the refinement's accepted requests
	// were sent at, and rttLow the shortest round trip at the last
	// answer: what is left of span over them was late (lateLocked).
	tried, rttLow time.Duration
	room          int           // the count per window for a window after that refusal (0: the gap's)
	floor         time.Duration // a leaky bucket's gap under the rate found (probe_floor.go)
}

const (
	probeOff = iota
	probeSlowStart
	probeFound
	probeRefine // a leaky bucket's gap refined (pace.go)
	probeSpaced // a leaky bucket's gap found (pace.go)
)

// onResponseLocked feeds a bare answer (no usable quota) or a refusal to the
// probe or the spreading. Requires s.mu.
func (s *learnSchedule) onResponseLocked(refused bool, now, pauseEnd time.Time, probeWindow, rtt, rttLow time.Duration) {
	p := &s.probe
	if !refused {
		s.accepts.add(now)
	}
	s.rampLocked(refused)
	if refused && s.claimsLeft && s.trustedLocked() && s.refusedInsideLocked(now) {
		s.distrustLocked(now, pauseEnd, probeWindow, rtt)
		return
	}
	if p.phase == probeFound && !refused && now.Before(p.pauseEnd) && !s.trustedLocked() {
		// An answer of the burst the refusal ended, read after it: the
		// server accepted one more than was counted when the rate was found.
		p.n++
		return
	}
	if s.trustedLocked() || p.phase == probeFound {
		if p.phase == probeFound && !refused {
			p.recent.add(now)
			p.okAt = now
		}
		s.spreadLocked(refused, now, pauseEnd)
		if s.spread.changed.Equal(now) || s.spread.changed.Equal(pauseEnd) {
			s.spread.rtt = rtt
			if s.counting == countingEstimating {
				// A counter refuses requests that arrive closer than
				// the gap: take off no more than the shortest round
				// trip, so that a request sent after an early answer
				// does not arrive early.
				s.spread.rtt = rttLow
			}
		}
		return
	}
	if p.phase == probeRefine || p.phase == probeSpaced {
		p.rttLow = rttLow
		s.paceLocked(refused, now, pauseEnd, rtt)
		return
	}
	if !refused {
		p.okSent, p.okAt = s.sent, now
	}
	if !refused {
		if p.phase == probeOff {
			*p = probeState{phase: probeSlowStart, n: 1, w: probeWindow, episode: now}
		}
		// The run-up is paced, never a burst (slowStartGap): n rises by
		// half once half a window went at its pace.
		p.accepted++
		p.atN++
		if p.atN >= max(1, p.n/2) {
			p.prevN, p.n, p.atN = p.n, max(p.n+1, (p.n*3+1)/2), 0
		}
		return
	}
	if now.Before(p.pauseEnd) {
		return // one more answer of the burst that was refused already
	}
	p.pauseEnd = pauseEnd
	if p.accepted == 0 {
		*p = probeState{phase: probeSlowStart, n: 1, w: probeWindow, pauseEnd: pauseEnd}
		return
	}
	got, leaky := s.runUpRateLocked(now, pauseEnd, probeWindow)
	if leaky {
		s.enterRefineLocked(now)
		return
	}
	s.foundLocked(got, now, pauseEnd, probeWindow, rtt)
	if !pauseEnd.After(now) {
		// A bare refusal inside a pace: a leaky bucket's too, which
		// the floor keeps (probe_floor.go).
		p.refusedAt, p.refusedSent = now, s.sent
	}
}

// runUpRateLocked returns the rate found at the run-up's first refusal,
// read at now: what the server accepted in the window before it (a
// window's count is what a fixed window or a sliding log refuses at; the
// run-up's pace only rises, so no window before held more), the window
// ending where a Retry-After shorter than LearnProbeWindow says. A refusal of
// the first request at a new pace, though, is a leaky bucket's (nginx's
// limit_req: a request closer than W/N to the last is refused, whatever
// the window held) if the pace before it, accepted, is higher than the
// window's count and the refusal asks for no longer a pause than that
// pace's gap (a window's Retry-After is longer: a sliding log's run-up
// may be refused first at a new pace too): leaky is then true, and the
// gap is refined (pace.go). Requires s.mu.
func (s *learnSchedule) runUpRateLocked(now, pauseEnd time.Time, probeWindow time.Duration) (n int, leaky bool) {
	p := &s.probe
	from := now.Add(-max(probeWindow, pauseEnd.Sub(now)))
	if wait := pauseEnd.Sub(now); wait > 0 && wait < probeWindow {
		// A Retry-After shorter than the window tells where the server's
		// window started: a fixed window's start, a sliding log's oldest
		// arrival. What came before it is the last window's, however
		// close (a run-up across a fixed window's boundary).
		from = pauseEnd.Add(-probeWindow)
	}
	got, _ := s.accepts.since(from)
	if p.atN == 0 && p.prevN > got && pauseEnd.Sub(now) <= p.w/time.Duration(p.prevN) {
		return p.prevN, true
	}
	return max(1, got), false
}

// slowStartGap returns the run-up's pace: W/n between two requests, so
// that a server refusing requests closer than its W/N (a leaky bucket
// without a burst, nginx's limit_req) refuses only the first request of
// the pace that is too fast, not the second of a burst. Requires s.mu.
func (s *learnSchedule) slowStartGap() time.Duration {
	return s.probe.w / time.Duration(max(1, s.probe.n))
}

// foundLocked sets the rate found from refusals to n accepted over the
// window from now to the end of the pause the refusal asked for (at least
// probeWindow). Requires s.mu.
func (s *learnSchedule) foundLocked(n int, now, pauseEnd time.Time, probeWindow, rtt time.Duration) {
	p := &s.probe
	p.w = max(probeWindow, pauseEnd.Sub(now))
	p.n, p.phase, p.pauseEnd, p.foundAt = max(1, n), probeFound, pauseEnd, now
	// Which algorithm counts is not known: start at the share a
	// sliding-window counter accepts evenly (counterShare), which every
	// exact window accepts too, and probe upward from there.
	s.spread = spreadState{on: true, f: counterShare(int64(p.n)), fmax: maxFoundShare, changed: pauseEnd, pauseEnd: pauseEnd, rtt: rtt}
	if s.startTrialLocked(now, pauseEnd, rtt) {
		return
	}
	// The run-up's burst was counted at the start of a window: a counter
	// still carries nearly all of it when the pause ends, and refuses the
	// first request then (until W/(2n) into its next window). The spread
	// starts one gap after the pause, as if the burst had been spread too.
	gap, _ := s.gapLocked()
	s.hold = pauseEnd.Add(gap)
}
