package learn

import (
	"strings"
	"testing"
	"time"
)

// TestInferredWindowLateReading: issue 28's TestLearnLoopbackCounter/discord
// learned 10 per 982 ms of a server's 10 per 1 s under load (11 arrived in
// 992 ms). A reset given relative to the server's now (Discord's
// X-RateLimit-Reset-After, OpenAI's durations) is read against the
// client's: late by as long as the answer took to be read, never early.
// The one reading of a window (the client paused after a refusal) read
// 28 ms late, and the next window's read at once, are 972 ms apart; the
// window taken from them must still cover the server's whole second.
func TestInferredWindowLateReading(t *testing.T) {
	const w = time.Second
	t0 := time.Unix(1_700_000_000, 0)
	q := quotaTrack{floor: w}
	read := func(now, reset time.Time, late time.Duration) {
		q.observe(announcement{limit: 10, remaining: 5, reset: reset, late: late}, now, false)
	}
	read(t0.Add(-950*time.Millisecond), t0, time.Millisecond)                              // window 0, at once
	read(t0.Add(200*time.Millisecond), t0.Add(w+28*time.Millisecond), 30*time.Millisecond) // window 1, 28 ms late
	read(t0.Add(w+100*time.Millisecond), t0.Add(2*w), time.Millisecond)                    // window 2, at once
	got, _ := q.effectiveWindow()
	if got < w {
		t.Fatalf("window %v inferred of the server's %v (inferred gap %v, spread %v)", got, w, q.inferred, q.spread)
	}
	if got > w+w/10 {
		t.Errorf("window %v inferred of the server's %v: widened by more than the readings' lateness", got, w)
	}
}

// TestLateReadingIsNoNewWindow: under load, TestLearnLoopbackCounter/discord
// and /openai read one answer of the server's first window 528 ms late (a
// relative reset: it looked 528 ms later than the one read before) and took
// it for the next window's reset: 10 per 718 ms was learned of the server's
// 10 per 1 s, and 11 arrived in 850 ms. A reading no later than its own
// round trip explains is the same window; the next window's reset, a
// second on, still counts as one.
func TestLateReadingIsNoNewWindow(t *testing.T) {
	const w = time.Second
	t0 := time.Unix(1_700_000_000, 0)
	q := quotaTrack{floor: w}
	read := func(now, reset time.Time, late time.Duration) bool {
		return q.observe(announcement{limit: 10, remaining: 5, reset: reset, late: late}, now, false)
	}
	// The server's window ends at t0; the first answer, sent 375 ms
	// before it, is read 190 ms late.
	read(t0.Add(-185*time.Millisecond), t0.Add(5*time.Millisecond), 190*time.Millisecond)
	// An answer of the same window, read 538 ms after it was sent.
	if read(t0.Add(528*time.Millisecond-375*time.Millisecond), t0.Add(528*time.Millisecond), 538*time.Millisecond) {
		t.Fatal("a reading late by its round trip was taken for a new window")
	}
	if got, _ := q.effectiveWindow(); got < w {
		t.Fatalf("window %v taken of the server's %v (inferred gap %v, spread %v)", got, w, q.inferred, q.spread)
	}
	// The next window's reset, read at once, is one.
	if !read(t0.Add(200*time.Millisecond), t0.Add(w), time.Millisecond) {
		t.Fatal("the next window's reset was not taken for one")
	}
	got, _ := q.effectiveWindow()
	if got < w || got > w+w/2 {
		t.Fatalf("window %v inferred of the server's %v (inferred gap %v, spread %v)", got, w, q.inferred, q.spread)
	}
}

// TestIdleGapIsNoWindow: a client reads one window of a second, is idle
// for ten minutes, and reads the reset of the window it then enters: the
// gap between the two resets is the idle time, not a window. Taken for
// one, the quota was kept over ten minutes (scaled to the pause cap: a
// stall of that cap after the first burst).
func TestIdleGapIsNoWindow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	q := quotaTrack{floor: time.Second}
	read := func(now, reset time.Time) {
		q.observe(announcement{limit: 10, remaining: 5, reset: reset, late: time.Millisecond}, now, false)
	}
	read(t0, t0.Add(time.Second))
	later := t0.Add(10 * time.Minute)
	read(later, later.Add(time.Second))
	if got, why := q.effectiveWindow(); got > 2*time.Second {
		t.Fatalf("window %v (%s) after ten idle minutes", got, why)
	}
	// Active windows after it still give theirs.
	read(later.Add(time.Second+time.Millisecond), later.Add(2*time.Second))
	if got, why := q.effectiveWindow(); got < time.Second || got > 1100*time.Millisecond || !strings.Contains(why, "successive") {
		t.Fatalf("window %v (%s) from successive resets a second apart", got, why)
	}
}

// TestTruncatedResetsGapIsAWindow: ulule/limiter's resets, whole Unix
// seconds truncated from a window of 1 s that starts at the client's first
// request after the last ended, read 68-223 ms ahead at each answer: the
// gaps of a second between them are the window, not idle time (they were
// taken for idle time as more than twice the longest time to a reset
// seen, and the first gap of two, where a window's start crossed a whole
// second, was kept: 10 per 2 s, 1.9-2.0x the ideal).
func TestTruncatedResetsGapIsAWindow(t *testing.T) {
	base := time.Unix(1_767_225_600, 0)
	t0 := base.Add(777 * time.Millisecond)
	q := quotaTrack{floor: time.Second}
	for _, r := range []struct {
		at    time.Duration // after t0
		reset int64         // seconds after base
	}{{time.Millisecond, 1}, {1078 * time.Millisecond, 2}, {2155 * time.Millisecond, 3}, {3232 * time.Millisecond, 5}} {
		q.observe(announcement{limit: 10, remaining: 9, reset: base.Add(time.Duration(r.reset) * time.Second), coarse: true, late: time.Millisecond}, t0.Add(r.at), false)
	}
	if got, why := q.effectiveWindow(); got > 1100*time.Millisecond {
		t.Fatalf("window %v (%s) from truncated resets a second apart", got, why)
	}
}
