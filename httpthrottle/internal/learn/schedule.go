package learn

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// maxQuotasPerSchedule bounds the quotas one schedule keeps from what a
// server announces: a response listing a thousand policies costs no more.
const maxQuotasPerSchedule = 8

// learnSchedule is one schedule a learning Transport sets limits on: the
// user's Limiter (NewTransport, the route's own quotas), or a Bucket of its
// own (a bucket the server names, or a key of a NewKeyedTransport).
type learnSchedule struct {
	key, bucket string
	set         func(rxthrottle.Limit, ...rxthrottle.Limit) error
	own         *rxthrottle.Bucket // nil when set is the user's limiter's
	used        uint64             // the learner's use tick; requires the learner's mu

	mu      sync.Mutex
	quotas  []quotaTrack
	applied []rxthrottle.Limit
	probe   probeState
	spread  spreadState

	// How the server counts (see counting.go): the window boundary
	// a timer is set for, whether requests go one at a time until an
	// answer from the new window, and how many boundaries were judged.
	counting   int // countingUnknown, countingFixed, countingEstimating
	boundary   time.Time
	alone      bool
	aloneUntil time.Time
	checks     int
	renewal    time.Time  // for a quota with no boundary: when the spent quota renews (see watchRenewalLocked)
	hold       time.Time  // a pause to make once mu is released, zero if none
	early      earlyCheck // a check of whole-second resets (track_early.go)
	spreadWhy  string     // why the spreading of an announced quota began; "" for a refusal within it
	sent       time.Time  // when the request of the answer being read was sent, zero if not known (pace.go)

	// Evidence before trust (see trust.go): when the answers were
	// accepted, whether the last refusal still claimed some of the quota
	// left, and whether a refusal inside the announced quota made the
	// schedule keep the rate found from refusals instead.
	accepts    acceptLog
	claimsLeft bool
	distrusted bool
	inFlight   int // the trust ramp's cap on requests in flight; 0 before an announcement (see rampLocked)
	rampGot    int // accepted answers since the announcement was first trusted
}

// announcedLocked reports whether the schedule keeps announced quotas;
// requires s.mu.
func (s *learnSchedule) announcedLocked() bool {
	for _, q := range s.quotas {
		if w, _ := q.effectiveWindow(); w > 0 && q.limit >= 1 {
			return true
		}
	}
	return false
}

// learnQuotasLocked replaces the schedule's quotas by anns (request quotas of
// one response, a refusal if refused), carrying over what was inferred of
// each by name. Requires s.mu.
func (s *learnSchedule) learnQuotasLocked(anns []announcement, now time.Time, refused bool, probeWindow, maxPause time.Duration) {
	next := make([]quotaTrack, 0, min(len(anns), maxQuotasPerSchedule))
	spent := false // a boundary check's stretch just spent a quota of whole-second resets (holdLoneLocked)
	for _, a := range anns {
		if len(next) == maxQuotasPerSchedule {
			break
		}
		var q quotaTrack
		if i := slices.IndexFunc(s.quotas, func(q quotaTrack) bool { return q.name == a.name }); i >= 0 {
			q = s.quotas[i]
		} else {
			q.name = a.name
		}
		q.floor = probeWindow
		jumped := q.observe(a, now, refused)
		lone := jumped && s.alone
		switch {
		case refused:
		case !s.renewal.IsZero():
			if !now.Before(s.renewal) {
				s.judgeRenewalLocked(a, now)
			}
		case jumped && s.alone:
			s.judgeBoundaryLocked(&q, a, now)
		case q.approx:
			s.watchRenewalLocked(&q, a, now, maxPause)
		}
		s.earlyLocked(&q, a, now, refused, lone && !s.alone)
		spent = spent || (s.alone && s.renewal.IsZero() && !refused && q.coarse && q.limit >= 1 && int64(q.seen) == q.limit)
		next = append(next, q)
	}
	if s.alone && now.After(s.aloneUntil) {
		// No answer from a new window came: the server's resets do not
		// move. Judge the next boundary, if any.
		s.alone, s.boundary, s.renewal, s.checks = false, time.Time{}, time.Time{}, s.checks+1
	}
	s.earlyExpireLocked(next)
	s.quotas = next
	if spent && s.alone {
		s.holdLoneLocked(now, probeWindow, maxPause)
	}
	s.claimsLeft = refused && claimsLeft(anns)
	if s.trustedLocked() {
		s.probe = probeState{} // the server speaks: no more guessing
	}
}

// rateLocked returns the window and count of the rate the spreading
// follows: the announced quota with the lowest rate, or the rate found.
// Requires s.mu.
func (s *learnSchedule) rateLocked() (time.Duration, int64) {
	if s.probe.phase == probeFound {
		return s.probe.w, int64(s.probe.n)
	}
	w, n := s.tightestLocked()
	if s.counting == countingEstimating {
		// The share of a counting server is worked out on its window
		// (counterShare) with the readings' jitter, not the 1% more the
		// strict window keeps: the shortest gap between two resets can
		// be short by the jitter, never long.
		for _, q := range s.quotas {
			if ew, _ := q.effectiveWindow(); ew == w && q.limit == n && q.window == 0 && q.inferred > 0 && !q.coarse {
				w = min(w, max(q.inferred+2*q.spread, q.maxUntil))
				break
			}
		}
	}
	return w, n
}

// tightestLocked returns the window and count of the announced quota with
// the lowest rate. Requires s.mu.
func (s *learnSchedule) tightestLocked() (time.Duration, int64) {
	var bw time.Duration
	var bn int64
	for _, q := range s.quotas {
		w, _ := q.effectiveWindow()
		if w <= 0 || q.limit < 1 {
			continue
		}
		if bw == 0 || float64(q.limit)/float64(w) < float64(bn)/float64(bw) {
			bw, bn = w, q.limit
		}
	}
	return bw, bn
}

// limitsLocked returns the limits the schedule should have now, the
// source and reason of the change, and whether it knows any. Requires s.mu.
func (s *learnSchedule) limitsLocked(ceiling []rxthrottle.Limit, maxPause time.Duration) (limits []rxthrottle.Limit, source, reason string) {
	add := func(n int64, w time.Duration) {
		if w > maxPause { // a window longer than the maximum pause would stall a caller beyond it
			n, w = max(1, int64(float64(n)*float64(maxPause)/float64(w))), maxPause
			reason = fmt.Sprintf("a window is scaled to the maximum pause %v", maxPause)
		}
		l := rxthrottle.Per(int(min(n, 1<<30)), w)
		if !slices.Contains(limits, l) {
			limits = append(limits, l)
		}
	}
	switch {
	case s.trustedLocked():
		source = "announced quota"
		for _, q := range s.quotas {
			w, why := q.effectiveWindow()
			if w <= 0 || q.limit < 1 {
				continue
			}
			add(q.limit, w)
			if why != "" && reason == "" {
				reason = why
			}
		}
		if c := s.inFlightCapLocked(); c > 0 {
			add(int64(c), time.Nanosecond)
			reason = fmt.Sprintf("an announcement is trusted as its answers bear it out: at most %d in flight", c)
		}
		if s.alone {
			// One in flight at a time: a held token of 1 per nanosecond
			// renews as soon as its answer is read.
			add(1, time.Nanosecond)
			reason = "one request at a time at a window boundary, to see how the server counts"
		}
		if s.earlyLimits(add) {
			reason = "a window's last requests held back, to see whether its whole-second resets overstate it"
		}
		if s.spread.on {
			why := s.spreadWhy
			if why == "" {
				why = "refused within the announced quota"
			}
			source, reason = "spread", fmt.Sprintf("%s: requests spread evenly at %.1f%% of it", why, 100*s.spread.f)
		}
	case s.probe.phase == probeSlowStart:
		add(int64(s.probe.n), s.probe.w)
		add(1, s.slowStartGap())
		source, reason = "429", "nothing published: slow start, paced"
	case s.probe.phase == probeRefine || s.probe.phase == probeSpaced:
		source, reason = "429", s.paceLimits(add)
	case s.probe.phase == probeFound:
		source, reason = "429", s.foundLimitsLocked(add)
	}
	if s.spread.on && !s.trialLocked() && len(limits) > 0 {
		if gap, ok := s.gapLocked(); ok {
			// A held token renews the gap after the answer, so requests
			// leave a round trip further apart than the gap: take it off
			// (at most half the gap), so that they leave at the share's
			// pace. The quota's own limits above still bound every window.
			add(1, max(gap-min(s.spread.rtt, gap/2), time.Nanosecond))
		}
	}
	if len(limits) == 0 {
		return nil, "", ""
	}
	for _, l := range ceiling {
		if !slices.Contains(limits, l) {
			limits = append(limits, l)
		}
	}
	return limits, source, reason
}

// foundLimitsLocked adds the limits of a rate found from refusals and
// returns why they are what they are. Requires s.mu.
func (s *learnSchedule) foundLimitsLocked(add func(n int64, w time.Duration)) string {
	add(int64(s.probe.n), s.probe.w)
	if s.probe.floor > 0 {
		add(1, s.probe.floor) // a leaky bucket's gap (probe_floor.go)
	}
	if s.trialLocked() {
		// One in flight: a held token of 1 per nanosecond renews as
		// soon as its answer is read (probe_trial.go).
		add(1, time.Nanosecond)
		return "nothing published: rate found from refusals, kept as a sliding log takes it (not spread, one request in flight) until a refusal"
	}
	if s.distrusted {
		return fmt.Sprintf("refused inside the announced quota, which is not trusted above what was accepted: rate found from refusals, spread evenly at %.1f%% of it", 100*s.spread.f)
	}
	return fmt.Sprintf("nothing published: rate found from refusals, spread evenly at %.1f%% of it", 100*s.spread.f)
}

// applyLocked sets the limits if they changed and returns the event to
// report, if any. Requires s.mu.
func (s *learnSchedule) applyLocked(ceiling []rxthrottle.Limit, maxPause time.Duration) (Event, bool) {
	limits, source, reason := s.limitsLocked(ceiling, maxPause)
	if limits == nil || slices.Equal(limits, s.applied) {
		return Event{}, false
	}
	if err := s.set(limits[0], limits[1:]...); err != nil {
		return Event{Key: s.key, Bucket: s.bucket, Source: source, Reason: "not applied: " + err.Error()}, true
	}
	s.applied = limits
	return Event{Key: s.key, Bucket: s.bucket, Limits: slices.Clone(limits), Source: source, Reason: reason}, true
}
