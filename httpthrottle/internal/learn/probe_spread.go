package learn

import (
	"math"
	"time"
)

// The even spreading: how any schedule spreads its requests for a server
// that estimates, or at a rate found from 429s (probe.go), and how the
// rate found is set anew from a window's count.

// spreadState spreads requests evenly for a server that refused although
// its announced quota was kept, or at a rate found from 429s.
type spreadState struct {
	on       bool
	f, fmax  float64
	quiet    int           // the windows without a refusal before the next rise of f; 0 for riseQuiet
	rtt      time.Duration // the round trip when f last changed (see limitsLocked)
	changed  time.Time
	pauseEnd time.Time
	trial    bool      // a rate found from 429s goes unspread, as a sliding log takes it (probe_trial.go)
	logCount int       // what the last window held at the trial's refusal, 0 if none (probe_trial.go)
	trialEnd time.Time // the end of the trial's refusal's pause
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
		if p := &s.probe; p.phase == probeFound && !p.refusedAt.IsZero() && !pauseEnd.After(now) {
			s.floorLocked(now)
		}
		if !sp.on {
			// Refused although the announced quota was kept: the server
			// estimates (or others share its quota).
			_, n := s.tightestLocked()
			sp.on, sp.f, sp.fmax = true, counterShare(n), counterShare(n)
			s.counting, s.alone = countingEstimating, false
		} else if p := &s.probe; p.phase == probeFound && s.stillFullLocked(now, pauseEnd) {
			sp.f, sp.fmax, sp.trial = counterShare(int64(p.n)), maxFoundShare, false
		} else if s.trialLocked() {
			s.trialRefusedLocked(now, pauseEnd)
		} else if p.phase == probeFound && s.refoundLocked(now) {
			sp.f, sp.fmax = counterShare(int64(p.n)), maxFoundShare
		} else {
			// Never below half the quota: a server refusing that much
			// more is not estimating, it is refusing at random.
			sp.fmax, sp.f = sp.f, max(0.5, sp.f*0.95)
		}
		sp.changed, sp.quiet = pauseEnd, 0
		return
	}
	if !sp.on || s.trialLocked() {
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
	n := max(got, (p.n+1)/2)
	if !p.refusedAt.IsZero() {
		// Never below what a window can hold (probe_floor.go).
		if n = max(n, s.fitCountLocked(now)); n >= p.n {
			return false
		}
	}
	p.n = n
	if c := s.spread.logCount; c > 0 && c < got && s.fixedFitsLocked(c, now) {
		p.n = c // a fixed window, which held its quota at the trial's refusal (probe_trial.go)
	}
	return true
}
