package learn

import (
	"math"
	"sort"
	"time"
)

// The trial of a sliding log's schedule (SPEC.md, Learned quotas). A 429
// with a whole-second Retry-After does not tell a sliding log (or a fixed
// window) from a sliding-window counter: both send one. A log accepts the
// rate found, N per W, however the requests fall in the window (its own
// count, which the Transport's strict window keeps), a burst of N at the
// end of the run-up's pause (its window then holds nothing) and a window's
// quota in every window after; a counter refuses such a burst at a
// window's start, and is called evenly, at counterShare (93% for N = 10).
// Spreading a log's requests so costs it the 7% and the burst its pause
// left room for. So the rate found is first kept as a log takes it: from
// the end of the run-up's pause, N per W and no spreading, one request in
// flight at a time, so that a server that refuses it refuses one request
// (then pauses for its Retry-After), not a burst. The trial lasts until a
// refusal, which ends it for good: the rate is then spread evenly at
// counterShare, from one gap after that refusal's pause, as it would have
// been from the run-up's, so a counter costs one refusal more. One at a
// time carries the rate only if a round trip is shorter than W/N: where it
// is not, no trial is made.
//
// The run-up may have found the rate one or two above a counter's quota
// (its estimate lags a rising rate: the window before its refusal held
// more than it lets through evenly). The trial's refusal bounds it: a
// counter refuses when its estimate prev*(W-d)/W + curr rounds to N, so N
// is at most the estimate plus a half, for the phase of its windows, which
// the client does not know; the largest estimate over every phase, worked
// out from the accepted answers, bounds N (a log or a fixed window that
// refused held N in the last window: at most what it accepted there). The
// rate found is lowered to that bound if it is above it, so that the even
// spreading after the trial is not refused again for it.

// startTrialLocked starts the trial at a rate just found from 429s, with
// the round trip rtt, unless the server is known to estimate (a refusal
// inside an announced quota) or one request at a time cannot carry the
// rate. It returns whether it did. Requires s.mu.
func (s *learnSchedule) startTrialLocked(now, pauseEnd time.Time, rtt time.Duration) bool {
	p := &s.probe
	if s.counting == countingEstimating || !pauseEnd.After(now) || rtt*time.Duration(2*p.n) >= p.w {
		return false
	}
	s.spread.trial = true
	return true
}

// trialLocked reports whether the trial runs. Requires s.mu.
func (s *learnSchedule) trialLocked() bool {
	return s.spread.trial && s.probe.phase == probeFound
}

// trialRefusedLocked ends the trial at a refusal read at now, whose pause
// ends at pauseEnd: the rate found, bounded by what the refusal tells
// (counterBoundLocked), is spread evenly from one gap after the pause, at
// counterShare, and the share never rises to 100% again. Requires s.mu.
func (s *learnSchedule) trialRefusedLocked(now, pauseEnd time.Time) {
	sp, p := &s.spread, &s.probe
	held, _ := s.accepts.since(now.Add(-p.w))
	p.n, sp.logCount, sp.trialEnd = min(p.n, s.counterBoundLocked(now)), held, pauseEnd
	sp.trial = false
	sp.f, sp.fmax = counterShare(int64(p.n)), 1
	gap, _ := s.gapLocked()
	s.hold = pauseEnd.Add(gap)
}

// counterBoundLocked returns the most the server's quota can be for a
// refusal read at now: what it accepted in the last window of the rate
// found (a log's or a fixed window's count), or the largest estimate of a
// sliding-window counter of that window over every phase of its windows,
// plus a half, rounded down, whichever is more. Requires s.mu.
func (s *learnSchedule) counterBoundLocked(now time.Time) int {
	w := s.probe.w
	ts := s.accepts.within(now.Add(-2*w), now.Add(1))
	in := func(from, to time.Time) int { // accepted in [from, to)
		i := sort.Search(len(ts), func(i int) bool { return !ts[i].Before(from) })
		j := sort.Search(len(ts), func(j int) bool { return !ts[j].Before(to) })
		return j - i
	}
	est := func(c time.Time) float64 { // the counter's estimate at now, its window started at c
		left := float64(c.Add(w).Sub(now)) / float64(w)
		return float64(in(c.Add(-w), c))*left + float64(in(c, now.Add(1)))
	}
	// Between two instants where an answer enters or leaves one of the
	// two windows, the estimate grows with the start c: its largest is
	// at such an instant, or at now.
	high := est(now)
	for _, t := range ts {
		for _, c := range []time.Time{t, t.Add(w)} {
			if c.After(now.Add(-w)) && !c.After(now) {
				high = math.Max(high, est(c))
			}
		}
	}
	return max(in(now.Add(-w), now.Add(1)), int(math.Floor(high+0.5)), 1)
}

// fixedFitsLocked reports whether a fixed window of quota c, at some
// phase (tried every thousandth of the window), holds every answer
// accepted since the trial's refusal's pause with at most c in each
// window and c in the one of a refusal read at now: what a fixed window
// found too high by the run-up (across its boundary) does, refusing the
// trial once its window holds its quota and the even spreading after
// once per window; a counter's windows hold more than the few of the
// trial it accepted before its refusal. Requires s.mu.
func (s *learnSchedule) fixedFitsLocked(c int, now time.Time) bool {
	w := s.probe.w
	ts := s.accepts.within(s.spread.trialEnd.Add(-1), now.Add(1))
	if len(ts) == 0 {
		return false
	}
	step := max(w/1000, 1)
	for b := ts[0].Add(-w + 1); !b.After(ts[0]); b = b.Add(step) {
		fits, start, n := true, b, 0
		for _, t := range ts {
			for !t.Before(start.Add(w)) {
				start, n = start.Add(w), 0
			}
			if n++; n > c {
				fits = false
				break
			}
		}
		if fits && !now.Before(start) && now.Before(start.Add(w)) && n == c {
			return true
		}
	}
	return false
}
