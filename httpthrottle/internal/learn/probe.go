package learn

import (
	"math"
	"time"
)

// A rate found from 429s, and the even spreading (see WithLearnLimits):
// how a schedule with nothing published finds the highest rate a server
// accepts, and how any schedule spreads its requests for a server that
// estimates.

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
	recent   acceptLog // once found: when the last answers were accepted

	// A leaky bucket's gap (pace.go): the gap tried, the last accepted,
	// the run-up's refused, the refinement's steps accepted, what the
	// window before the run-up's refusal accepted, and the longest the
	// gap can be by the refinement's accepted pairs (upper, 0 if none).
	gap, gapOK, gapRefused time.Duration
	refined                int
	windowCount            int       // accepted in the window before the run-up's refusal
	refusedAt              time.Time // the last refusal
	okSent                 time.Time // when the last request accepted was sent
	okAt                   time.Time // when the last accepted answer was read
	upper                  time.Duration
}

// maxRecentAccepts bounds the acceptances a rate found from 429s keeps
// (8 KiB a schedule at most, 4 MiB for the most schedules a Transport
// keeps by default): a rate of more than that per window is cut by 5% at
// a refusal, never found anew.
const maxRecentAccepts = 1024

// acceptLog is a ring of the read times of the last accepted answers, as
// offsets from the first (time.Time is three times the size).
type acceptLog struct {
	base time.Time
	at   []time.Duration
	next int
}

func (a *acceptLog) add(t time.Time) {
	if a.base.IsZero() {
		a.base = t
	}
	d := t.Sub(a.base)
	if len(a.at) < maxRecentAccepts {
		a.at = append(a.at, d)
		return
	}
	a.at[a.next] = d
	a.next = (a.next + 1) % maxRecentAccepts
}

// since returns how many answers were accepted after t, and false if the
// ring no longer reaches back to t.
func (a *acceptLog) since(t time.Time) (int, bool) {
	cut, n := t.Sub(a.base), 0
	for _, at := range a.at {
		if at > cut {
			n++
		}
	}
	return n, n < maxRecentAccepts
}

const (
	probeOff = iota
	probeSlowStart
	probeFound
	probeRefine // a leaky bucket's gap refined (pace.go)
	probeSpaced // a leaky bucket's gap found (pace.go)
)

// spreadState spreads requests evenly for a server that refused although
// its announced quota was kept, or at a rate found from 429s.
type spreadState struct {
	on       bool
	f, fmax  float64
	quiet    int           // the windows without a refusal before the next rise of f; 0 for riseQuiet
	rtt      time.Duration // the round trip when f last changed (see limitsLocked)
	changed  time.Time
	pauseEnd time.Time
}

// onResponse feeds a bare answer (no usable quota) or a refusal to the
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
	p.n, p.phase, p.pauseEnd = max(1, n), probeFound, pauseEnd
	// Which algorithm counts is not known: start at the share a
	// sliding-window counter accepts evenly (counterShare), which every
	// exact window accepts too, and probe upward from there.
	s.spread = spreadState{on: true, f: counterShare(int64(p.n)), fmax: maxFoundShare, changed: pauseEnd, pauseEnd: pauseEnd, rtt: rtt}
	// The run-up's burst was counted at the start of a window: a counter
	// still carries nearly all of it when the pause ends, and refuses the
	// first request then (until W/(2n) into its next window). The spread
	// starts one gap after the pause, as if the burst had been spread too.
	gap, _ := s.gapLocked()
	s.hold = pauseEnd.Add(gap)
}

// maxFoundShare is how far the spreading of a rate found from 429s may
// rise above it before a refusal caps it: 10% (beyond 100%, rises raise
// the rate found; see spreadLocked).
const maxFoundShare = 1.1

// gapLocked returns the spreading's gap between two requests, W/(N*f) of
// the rate it follows (rateLocked), and false if it follows none.
// Requires s.mu.
func (s *learnSchedule) gapLocked() (time.Duration, bool) {
	w, n := s.rateLocked()
	if w <= 0 || n <= 0 {
		return 0, false
	}
	return time.Duration(float64(w) / (float64(n) * s.spread.f)), true
}

// riseQuiet is the quiet stretch, in windows, before a rise of the
// spreading's share up to counterShare; above it, each rise doubles the
// stretch before the next, up to riseQuietMax (see spreadLocked).
const (
	riseQuiet    = 2
	riseQuietMax = 16
)

// spreadLocked adjusts the even spreading: a refusal turns it on (for an
// announced quota) or lowers it by 5%, never below half the rate, and
// marks the level that was refused; a quiet stretch raises it by 0.5%, up
// to just below the level last refused. The stretch is two windows up to
// the share a sliding-window counter accepts evenly (counterShare): below
// it the share only makes up for a cut. Above it each rise probes a level
// an estimating server may refuse, and each refusal costs its Retry-After
// (a whole window at such a counter): each rise doubles the stretch before
// the next, up to 16 windows, and a refusal starts again at two. For a
// rate found from 429s, rising beyond the rate found raises the rate
// found. Requires s.mu.
func (s *learnSchedule) spreadLocked(refused bool, now, pauseEnd time.Time) {
	sp := &s.spread
	if refused {
		if now.Before(sp.pauseEnd) {
			return // one more answer of the burst that was refused already
		}
		sp.pauseEnd = pauseEnd
		if !sp.on {
			// Refused although the announced quota was kept: the server
			// estimates (or others share its quota).
			_, n := s.tightestLocked()
			sp.on, sp.f, sp.fmax = true, counterShare(n), counterShare(n)
			s.counting, s.alone = countingEstimating, false
		} else if p := &s.probe; p.phase == probeFound && s.refoundLocked(now) {
			sp.f, sp.fmax = counterShare(int64(p.n)), maxFoundShare
		} else {
			// Never below half the quota: a server refusing that much
			// more is not estimating, it is refusing at random.
			sp.fmax, sp.f = sp.f, max(0.5, sp.f*0.95)
		}
		sp.changed, sp.quiet = pauseEnd, 0
		return
	}
	if !sp.on {
		return
	}
	w, n := s.rateLocked()
	const step = 0.005
	quiet := max(sp.quiet, riseQuiet)
	if w <= 0 || now.Sub(sp.changed) < time.Duration(quiet)*w || sp.f+step >= sp.fmax {
		return
	}
	if sp.f >= counterShare(n) {
		sp.quiet = min(2*quiet, riseQuietMax)
	}
	sp.f += step
	sp.changed = now
	if p := &s.probe; p.phase == probeFound && sp.f > 1 {
		// Beyond the rate found: it was found too low (the window it
		// was measured over was too long). Raise it, at the same pace.
		n := int(math.Ceil(float64(p.n) * sp.f))
		sp.f, sp.fmax = sp.f*float64(p.n)/float64(n), sp.fmax*float64(p.n)/float64(n)
		p.n = n
	}
}

// refoundLocked sets the rate found from 429s anew at a refusal read at
// now, if the server accepted fewer than the rate found in the window
// before it: requests spread evenly, a window's count is the rate the
// server keeps, and the rate was found too high (a run-up across a fixed
// window's boundary counts two windows' quota, a sliding-window counter's
// estimate lets more than its quota through a window it starts lightly
// loaded) or the server's quota fell. It takes at least half a window of
// answers since the rate was found and one of them accepted (a refusal of
// the first requests says nothing of the rate), and a refusal at most
// halves the rate. A refusal with the rate found accepted in the window is
// one at the edge, for the share to take. Requires s.mu.
func (s *learnSchedule) refoundLocked(now time.Time) bool {
	p := &s.probe
	if p.recent.base.IsZero() || now.Sub(p.recent.base) < p.w/2 {
		return false
	}
	got, ok := p.recent.since(now.Add(-p.w))
	if !ok || got < 1 || got >= p.n {
		return false
	}
	p.n = max(got, (p.n+1)/2)
	return true
}
