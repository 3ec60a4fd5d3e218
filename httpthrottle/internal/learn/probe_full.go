package learn

import "time"

// A fixed window found full. With nothing published, not even a
// Retry-After, the run-up's refusal says the server's window is full and
// not where it ends: a sliding log of the count in the window before the
// refusal takes a request again as soon as the oldest of them leaves it,
// and the spreading's first request goes about then. A second refusal
// with nothing accepted since is a window that stays full until its end: a
// fixed window, whose count is not the last window's (the run-up crossed
// its start) and whose end is not known. Sent again at the spreading's
// gap, each request until that end is one more refusal.
//
// Its start is not known either, but the refusals and the run-up bound
// it: the window began less than W before the second refusal (it still
// refused then), and the window before it was never refused, so it held
// no more than the one refused. The latest start b for which that holds
// (the count accepted in [b-W, b) at most the count in [b, refusal)) is
// as late as the window can have started, and its count the least the
// window can hold. Of the starts in that range, the one a fixed window
// usually has is taken if it is there: a multiple of W on the clock (a
// counter per Unix second or minute) or a whole number of W after the
// client's first accepted request (a window started by the key's first
// hit); the latest of them, else b. The schedule waits until that start
// plus W, past the window's end, and keeps its count, counting only the
// answers read a round trip after the start (one read just after it may
// have arrived before). The window then starts afresh, and the even
// spreading at that count keeps every fixed window of it, wherever it
// starts; a window of another phase, whose usual start is in the range and
// wrong, may cost one refusal more.

// stillFullLocked applies the rule above to a refusal read at now with no
// pause asked (pauseEnd not after now), if it is the first since the rate
// was found from the run-up's and nothing was accepted since: it sets the
// rate found and the hold, and returns true. Requires s.mu.
func (s *learnSchedule) stillFullLocked(now, pauseEnd time.Time) bool {
	p := &s.probe
	if p.fullHeld || pauseEnd.After(now) || !p.recent.base.IsZero() || p.foundAt.IsZero() {
		return false
	}
	p.fullHeld = true
	t1, w := p.foundAt, p.w
	ts := s.accepts.within(t1.Add(-2*w), t1)
	low := latest(t1, now).Add(-w)
	var start time.Time
	for _, b := range ts {
		if b.After(low) && windowFits(ts, b, w, 0) {
			start = b
		}
	}
	if start.IsZero() {
		return false
	}
	// The usual starts: a whole number of windows after the first
	// acceptance, or on the clock.
	first := s.accepts.base
	var usual time.Time
	for _, c := range []time.Time{first.Add(t1.Sub(first) / w * w), unix0.Add(t1.Sub(unix0) / w * w)} {
		if c.After(low) && !c.After(start) && c.After(usual) && windowFits(ts, c, w, s.spread.rtt) {
			usual = c
		}
	}
	count := countFrom(ts, start, 0)
	if !usual.IsZero() {
		start, count = usual, countFrom(ts, usual, s.spread.rtt)
	}
	if count < 1 || count >= p.n {
		return false
	}
	p.n = count
	s.hold = latest(s.hold, start.Add(w))
	return true
}

// countFrom returns how many of ts were read at or after b+late.
func countFrom(ts []time.Time, b time.Time, late time.Duration) int {
	n := 0
	for _, t := range ts {
		if !t.Before(b.Add(late)) {
			n++
		}
	}
	return n
}

// windowFits reports whether a fixed window of w starting at b, counting
// the answers of ts read late after its start or later, holds at least
// one of them and no fewer than the window before it: the run-up's,
// never refused.
func windowFits(ts []time.Time, b time.Time, w, late time.Duration) bool {
	n := countFrom(ts, b, late)
	return n > 0 && countFrom(ts, b.Add(-w), late)-n <= n
}

// unix0 is the Unix epoch, from which a counter per window numbers them.
var unix0 = time.Unix(0, 0)
