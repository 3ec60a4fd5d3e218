package learn

import (
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
