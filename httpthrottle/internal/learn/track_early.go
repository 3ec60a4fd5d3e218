package learn

import "time"

// Whole-second resets that overstate the window. A server that counts a
// sliding log (or any window shorter than its resets say) and writes the
// instant its oldest arrival leaves the window in whole Unix seconds,
// rounded up so that it is never early, announces a reset up to a second
// late. A client that pauses until such a reset resumes at a whole second,
// its next window's oldest arrival is then just after one, and that
// window's reset is a whole second later than the window: the resets'
// gaps say W plus a second every time (10 per 1 s kept as 10 per 2 s,
// issue 26), and no number of them tells more, for each reset is exactly
// where the client resumed. A fixed window that starts at the first
// request after the last one ended, its end truncated to a whole second
// (ulule/limiter's), looks alike once the client's start crosses a whole
// second: 10 per 1 s kept as 10 per 2 s again.
//
// Only arrivals can tell, and they need cost no refusal. Once a spent
// quota's reset is read, the next window (once every token of this one
// came back, so that its first requests go together), or the window a
// boundary check's lone request began when it found a server that
// accepts a burst, holds its last k requests back: N-k go, the j-th of
// the k goes x_j after the window's first (a limit of N-k+j-1 per x_j).
// The server then counts at most N-1 requests of this client besides one
// of them: each is accepted, whatever its window. An answer saying it
// counts fewer besides than the window's answers read before shows that
// the oldest had left: a sliding log's window, or a window from the
// first request, is at most the time from the window's first request to
// that answer, and the quota is kept over it without pausing until the
// resets. A fixed window ending where its resets say counts them all
// until then: an answer is taken only if it was read before the reset
// the window's first answer carried (a fixed window's end; a rounded-up
// sliding log's is later than the window), and the whole check only at a
// server whose every answer came at least the window tried before its
// reset (an answer read late in a fixed window is not). Read later, an
// answer's reset is learned from as any. x_1 is the whole second above
// the shortest window the resets allow (the longest time to a reset less
// a second), a margin more; the others share the rest of the window kept,
// up to that reset, evenly (on virtual time 10 per 1 s and 3 s found
// within 15 ms, 10 per 1.5 s within 80). A window found ends the checks
// unless it is longer than its x by more than earlyLoose (an answer read
// late on a loaded machine): the next window checks again, at most
// maxEarlyChecks in all. None found, the next spent window may check
// again; a held-back request refused (the server counts others' requests
// too) or the quota gone from the answers (a dialect changed) ends them.
// A window of more than maxEarlyWindow is not checked.

// earlyMargin is how far past a whole second the first held-back request
// goes: the client's clock reading and the server's counting are a few
// milliseconds apart.
const earlyMargin = 10 * time.Millisecond

// maxEarlyChecks bounds the windows a schedule holds requests back in.
const maxEarlyChecks = 3

// maxEarlyWindow is the longest window kept that is checked: whole-second
// resets overstate a longer one by a fifth of it at most, and holding
// requests back in a long fixed window delays them for long.
const maxEarlyWindow = 5 * time.Second

// maxEarlyHeld bounds the requests a window holds back.
const maxEarlyHeld = 4

// earlySpanSlack is how much less than the window tried the time from a
// request's send to its reset may be at a sliding log: the spread of a
// burst's sends (see planEarlyLocked).
const earlySpanSlack = 250 * time.Millisecond

// earlyLoose is how much shorter than the window kept a held-back
// request's x must be to be worth sending, and how much longer than it a
// window found may be before the next window checks again.
const earlyLoose = 3 * earlyMargin

// earlyCheck is a check of whole-second resets (see above).
type earlyCheck struct {
	quota   string          // the quota's name
	n       int64           // its N when planned
	xs      []time.Duration // the held-back requests' times after the window's first, ascending; nil for no check
	planned time.Time       // the checked window's requests are those sent from then on
	bound   time.Time       // the reset the window's first answer carried: an answer read from then on tells nothing of its own; zero for no bound
	from    time.Time       // the earliest send of the checked window's accepted requests; zero before its first answer
	seen    int             // the checked window's accepted answers read
	windows int             // the windows checked on this schedule
	stop    bool            // the checks ended: no other begins
}

// earlyExpireLocked ends a check whose quota the answer just learned from
// did not announce (a server that changes its dialect): the schedule
// keeps that answer's quotas, next, only. Requires s.mu.
func (s *learnSchedule) earlyExpireLocked(next []quotaTrack) {
	if s.early.xs == nil {
		return
	}
	for _, q := range next {
		if q.name == s.early.quota {
			return
		}
	}
	s.early.xs, s.early.stop = nil, true
}

// earlyLocked feeds the answer a to q (its track, already observing a),
// read at now, to the check of whole-second resets: it follows the
// checked window's answers, judges the held-back ones', and begins a
// check at a spent quota's reset or at the answer to a boundary check's
// lone request (lone). It may set s.hold, the pause the caller makes once
// s.mu is released. Requires s.mu.
func (s *learnSchedule) earlyLocked(q *quotaTrack, a announcement, now time.Time, refused, lone bool) {
	c := &s.early
	sent := now.Add(-a.late)
	if c.xs != nil && c.quota == q.name {
		switch {
		case sent.Before(c.planned):
			// An answer of the window before.
		case refused:
			// No more than N-1 of this client's were counted: the
			// server counts others' too, or estimates.
			c.xs, c.stop = nil, true
		case c.from.IsZero() || sent.Before(c.from.Add(c.xs[0]-time.Millisecond)):
			// One of the window's first requests.
			if c.from.IsZero() {
				c.from, c.bound = sent, a.reset
			}
			c.from = earliest(c.from, sent)
			c.seen++
		default:
			s.judgeEarlyLocked(q, a, now, sent)
		}
		return
	}
	if refused || a.remaining < 0 || !s.earlyDueLocked(q) {
		return
	}
	switch {
	case lone && a.remaining == a.limit-1:
		// A boundary check's lone request found a server that accepts a
		// burst: its window is checked, the lone request its first.
		s.planEarlyLocked(q, a, sent, a.reset.Sub(sent))
		s.early.from, s.early.bound, s.early.seen = sent, a.reset, 1
	case a.remaining == 0:
		// The next window is checked, once every token came back.
		kept, _ := q.effectiveWindow()
		s.planEarlyLocked(q, a, now.Add(kept), kept)
		if s.early.xs != nil {
			s.hold = latest(s.hold, s.early.planned)
		}
	}
}

// judgeEarlyLocked reads a, read at now, the answer to a held-back
// request sent at sent (see above). Requires s.mu.
func (s *learnSchedule) judgeEarlyLocked(q *quotaTrack, a announcement, now, sent time.Time) {
	c := &s.early
	j := len(c.xs) - 1
	for j > 0 && sent.Before(c.from.Add(c.xs[j]-time.Millisecond)) {
		j--
	}
	kept, _ := q.effectiveWindow()
	found := now.Sub(c.from)
	// The server counts fewer besides this request than the window's
	// answers read before it: one of them, the oldest, had left.
	left := a.remaining >= 0 && q.limit-a.remaining-1 < int64(c.seen)
	c.seen++
	if !left || (!c.bound.IsZero() && !now.Before(c.bound)) || found >= kept {
		if j == len(c.xs)-1 {
			// The window's last: no window found in it. The next spent
			// window may try again (its x from what it says then).
			c.xs = nil
			c.windows++
		}
		return
	}
	q.arrivals = found
	c.windows++
	if found <= c.xs[j]+earlyLoose || c.windows >= maxEarlyChecks {
		c.xs, c.stop = nil, true
		return
	}
	// Found long (an answer read late on a loaded machine): the next
	// window checks again, holding back no request longer than the
	// window now kept, once every token came back.
	c.xs, c.planned, c.from, c.bound, c.seen = c.xs[:j+1], now.Add(found), time.Time{}, time.Time{}, 0
	s.hold = latest(s.hold, c.planned)
}

// planEarlyLocked begins a check of q's whole-second resets from a, if a
// request held back is worth sending: the checked window's requests are
// those sent from planned on, and none is held back until (the reset a
// fixed window would have) after the first (see above). Requires s.mu.
func (s *learnSchedule) planEarlyLocked(q *quotaTrack, a announcement, planned time.Time, until time.Duration) {
	kept, _ := q.effectiveWindow()
	kept = min(kept, until)
	lo := max(0, q.maxUntil-time.Second)
	k := min(maxEarlyHeld, int((a.limit-1)/2))
	first := lo.Truncate(time.Second) + time.Second + earlyMargin
	if kept-lo < 2*earlyLoose || kept > maxEarlyWindow || q.minSpan < min(first, kept)-earlySpanSlack {
		// Nothing shorter to find, a second more is little of the
		// window, or a request went less than the window tried before
		// the reset its answer carried: where the reset is a window's
		// first arrival plus the window, rounded up, none does (but for
		// the spread of a burst). The server keeps fixed windows (the
		// request came late in one), and its resets are their ends.
		return
	}
	// The whole second above lo, the likeliest window, then the rest of
	// the window kept in even steps (from lo if no whole second fits).
	var xs []time.Duration
	from := lo
	if first < kept-earlyLoose {
		xs, from = append(xs, first), first
	}
	for j := 1; len(xs) < k && j < k; j++ {
		if x := from + (kept-earlyLoose-from)*time.Duration(j)/time.Duration(k-1); x >= time.Second && x > from {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return
	}
	s.early = earlyCheck{quota: q.name, n: a.limit, xs: xs, planned: planned, windows: s.early.windows}
}

// earlyLimits returns the limits of the held-back requests: the j-th of k
// (from 0) goes when N-k+j have gone in the x_j before it. Requires s.mu.
func (s *learnSchedule) earlyLimits(add func(n int64, w time.Duration)) bool {
	c := &s.early
	for j, x := range c.xs {
		add(c.n-int64(len(c.xs))+int64(j), x)
	}
	return c.xs != nil
}

// earlyDueLocked reports whether q is a quota a check is for: its resets
// in whole Unix seconds, no window announced or stated, none found yet, a
// quota of at least 3 (one to hold back, two to tell it from), at a
// server that accepts a burst (countingFixed), and no other
// one-at-a-time stretch running. Requires s.mu.
func (s *learnSchedule) earlyDueLocked(q *quotaTrack) bool {
	return q.coarse && !q.approx && q.window == 0 && q.arrivals == 0 && q.limit >= 3 &&
		s.counting == countingFixed && !s.alone && !s.spread.on && !s.distrusted && !s.early.stop && s.early.windows < maxEarlyChecks
}

// earlyPendingLocked reports whether a check is running: a window's last
// requests are held back. Requires s.mu.
func (s *learnSchedule) earlyPendingLocked() bool { return s.early.xs != nil }

// resetsOverstateLocked reports whether a spent quota's reset is not to be
// paused on: a check found the resets late (the quota is kept over the
// window found instead). Requires s.mu.
func (s *learnSchedule) resetsOverstateLocked() bool {
	for _, q := range s.quotas {
		if q.arrivals > 0 && q.window == 0 {
			return true
		}
	}
	return false
}

// earliest returns the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
