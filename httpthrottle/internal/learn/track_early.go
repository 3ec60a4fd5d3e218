package learn

import "time"

// Whole-second resets rounded up. A server that counts a sliding log (or
// any window shorter than its resets say) and writes the instant its
// oldest arrival leaves the window in whole Unix seconds, rounded up so
// that it is never early, announces a reset up to a second late. A client
// that pauses until such a reset resumes at a whole second, its next
// window's oldest arrival is then just after one, and that window's reset
// is a whole second later than the window: the resets' gaps say W plus a
// second every time (10 per 1 s kept as 10 per 2 s, issue 26), and no
// number of them tells more, for each reset is exactly where the client
// resumed. Only an arrival before a reset can tell: once a spent quota's
// reset is read, one request goes alone at the instant the window would
// end if it were a whole number of seconds, R less the oldest arrival's
// instant rounded up (the only window a rounded-up reset and a burst
// started within a second of it allow besides a longer one). Accepted, it
// shows that the oldest arrival had left: the window is at most the time
// from the window's first request to its answer, and the quota is kept
// over that, without pausing until the resets. Refused, the resets are
// kept as they are, and the refusal is this check's, not the server's
// estimate (it does not turn the spreading on), and no other check
// begins: it costs at most that one refusal. A check answered late finds
// the window that much long; the next spent windows check again, at most
// maxEarlyChecks in all on a schedule (a server that changes its dialect
// on every answer is checked no more often). A fixed window's resets (their ends)
// look alike once the client resumes at each, but not a window's first
// answer read late in one, less than the window guessed before its reset:
// a server that sent that is not checked.

// earlyMargin is how far after the guessed end of the window the early
// request goes: the client's clock reading and the server's counting
// are a few milliseconds apart.
const earlyMargin = 10 * time.Millisecond

// earlySpanSlack is how much less than the window guessed the time from a
// request's send to its reset may be at a sliding log: the spread of a
// burst's sends (see earlyLocked).
const earlySpanSlack = 250 * time.Millisecond

// earlyCheck is a pending check of a whole-second reset (see above).
type earlyCheck struct {
	quota   string    // the quota's name
	at      time.Time // when the lone request goes; zero for no check pending
	reset   time.Time // the reset it goes before: no answer by then ends the check
	from    time.Time // the earliest send of the window's accepted requests
	refused bool      // the last answer was this check's refusal (see learnOn)
	checks  int       // the checks begun on this schedule (at most maxEarlyChecks)
	stop    bool      // one was refused: no other begins
}

// maxEarlyChecks bounds the early checks of a schedule: the first finds
// the window, at most the time from the window's first request to the
// check's answer; one answered late (a loaded machine, the check's timer
// late) finds it that much long, and the next windows check again, while
// every check was accepted.
const maxEarlyChecks = 3

// earlyLoose is how much longer than the window guessed a window found may
// be before the next spent window checks again.
const earlyLoose = 3 * earlyMargin

// earlyExpireLocked ends a pending check whose quota the answer just
// learned from did not announce (a server that changes its dialect): the
// schedule keeps that answer's quotas, next, only. Requires s.mu.
func (s *learnSchedule) earlyExpireLocked(next []quotaTrack) {
	if s.early.at.IsZero() {
		return
	}
	for _, q := range next {
		if q.name == s.early.quota {
			return
		}
	}
	s.early.at = time.Time{}
}

// earlyLocked feeds the answer a to q (its track, already observing a),
// read at now, to the early check of a whole-second reset: it starts one
// at a spent quota's reset, and judges the lone request's answer. It sets
// s.hold, the pause the caller makes once s.mu is released. Requires s.mu.
func (s *learnSchedule) earlyLocked(q *quotaTrack, a announcement, now time.Time, refused bool) {
	c := &s.early
	if !c.at.IsZero() && c.quota == q.name {
		switch sent := now.Add(-a.late); {
		case !sent.Before(c.reset):
			// Sent at the reset or after (nothing went in between): the
			// check tells nothing.
			q.trial, c.at = 0, time.Time{}
		case !sent.Before(c.at.Add(-time.Millisecond)):
			// The lone request's answer.
			if refused {
				c.refused, c.stop = true, true
			} else if w := now.Sub(c.from); q.arrivals == 0 || w < q.arrivals {
				q.arrivals = w
			}
			q.trial, c.at = 0, time.Time{}
		case !refused && a.reset.Equal(c.reset):
			// A late answer of the window checked: the window's oldest
			// arrival may be its request's.
			c.from = earliest(c.from, now.Add(-a.late))
		}
		return
	}
	if refused || a.remaining != 0 || !s.earlyDueLocked(q) {
		return
	}
	guess := q.lastReset.Sub(ceilSecond(q.minSent))
	at := q.firstAt.Add(guess + earlyMargin)
	q.earlyTried = true
	if guess < time.Second || !at.Before(q.lastReset.Add(-earlyMargin)) || (q.arrivals > 0 && guess+earlyLoose >= q.arrivals) {
		return // the window's requests straddle a whole second, or the window found is as short: nothing shorter to try
	}
	if q.minSpan < guess-earlySpanSlack {
		// A request went less than the window guessed before the reset
		// its answer carried: where the reset is a sliding log's oldest
		// arrival plus the window, rounded up, none does (but for the
		// spread of a burst). The server keeps fixed windows (the
		// request came late in one), and its resets are their ends.
		return
	}
	q.trial, q.guessed = guess, guess
	*c = earlyCheck{quota: q.name, at: at, reset: q.lastReset, from: q.minSent, checks: c.checks + 1}
	s.hold = at
}

// earlyDueLocked reports whether q is a quota an early check is for: its
// resets in whole Unix seconds, no window announced or stated, none
// checked yet, an answer of the client's read in the window (the check's
// bound is from the earliest of their sends; answers of the window read
// after the check began count too), at a server that accepts a burst
// (countingFixed), and no other one-at-a-time stretch running. Requires
// s.mu.
func (s *learnSchedule) earlyDueLocked(q *quotaTrack) bool {
	return q.coarse && !q.approx && q.window == 0 && (q.arrivals == 0 && !q.earlyTried || q.arrivals > q.guessed+earlyLoose) &&
		!q.firstAt.IsZero() && !q.minSent.IsZero() &&
		s.counting == countingFixed && !s.alone && !s.spread.on && !s.distrusted && !s.early.stop && s.early.checks < maxEarlyChecks
}

// earlyPendingLocked reports whether an early check is running: requests
// go one at a time. Requires s.mu.
func (s *learnSchedule) earlyPendingLocked() bool { return !s.early.at.IsZero() }

// takeEarlyRefusalLocked reports whether the answer just learned from was
// the early check's refusal, and forgets it. Requires s.mu.
func (s *learnSchedule) takeEarlyRefusalLocked() bool {
	r := s.early.refused
	s.early.refused = false
	return r
}

// resetsOverstateLocked reports whether a spent quota's reset is not to be
// paused on: an early check is running, or one showed the resets late (the
// quota is kept over the window found instead). Requires s.mu.
func (s *learnSchedule) resetsOverstateLocked() bool {
	if s.earlyPendingLocked() {
		return true
	}
	for _, q := range s.quotas {
		if q.arrivals > 0 && q.window == 0 {
			return true
		}
	}
	return false
}

// ceilSecond returns t rounded up to a whole Unix second.
func ceilSecond(t time.Time) time.Time {
	if tr := t.Truncate(time.Second); tr.Before(t) {
		return tr.Add(time.Second)
	}
	return t
}

// earliest returns the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
