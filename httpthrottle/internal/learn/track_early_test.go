package learn

import (
	"strings"
	"testing"
	"time"
)

// earlySchedule returns a schedule keeping a quota of 10 whose resets are
// whole Unix seconds, at a server known to accept a burst, and a reader
// of one answer: read at now, sent late before it, remaining left, reset.
func earlySchedule() (*learnSchedule, func(now time.Time, late time.Duration, remaining int64, reset time.Time, refused bool)) {
	s := &learnSchedule{counting: countingFixed, set: nil}
	return s, func(now time.Time, late time.Duration, remaining int64, reset time.Time, refused bool) {
		a := announcement{name: "x-ratelimit", unit: unitRequests, limit: 10, remaining: remaining, reset: reset, coarse: true, late: late}
		s.learnQuotasLocked([]announcement{a}, now, refused, time.Second, time.Minute)
	}
}

// TestEarlyCheckCountsLateAnswers: a sliding log of 10 per 1 s whose
// resets are rounded up to whole seconds. The answer that says the quota
// is spent starts the check of the reset, but an answer of the same
// window read after it was sent before every other: the window's oldest
// arrival may be its request's, and the window the check finds must reach
// back to its send, or it is short.
func TestEarlyCheckCountsLateAnswers(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	reset := time.Unix(1_700_000_002, 0) // the oldest arrival, t0 or so, plus 1 s, rounded up
	s, read := earlySchedule()
	for i := range 9 {
		read(t0.Add(time.Duration(i)*time.Millisecond), 2*time.Millisecond, int64(9-i), reset, false)
	}
	if s.earlyPendingLocked() {
		t.Fatal("a check began before the quota was spent")
	}
	// The window's last answer says it is spent: the check begins, for a
	// window of 1 s.
	read(t0.Add(10*time.Millisecond), 2*time.Millisecond, 0, reset, false)
	if !s.earlyPendingLocked() {
		t.Fatal("no check of the reset began at the spent quota")
	}
	if w, _ := s.quotas[0].effectiveWindow(); w != time.Second {
		t.Fatalf("window %v tried, want 1s", w)
	}
	// An answer of the window read 200 ms after it was sent, 50 ms before
	// the first answer read.
	read(t0.Add(150*time.Millisecond), 200*time.Millisecond, 0, reset, false)
	sentFirst := t0.Add(-50 * time.Millisecond)
	// The lone request, accepted: the window is at most the time from the
	// earliest send of the window to its answer.
	at := s.early.at
	read(at.Add(2*time.Millisecond), 2*time.Millisecond, 9, reset.Add(time.Second), false)
	if s.earlyPendingLocked() {
		t.Fatal("the check is still pending after its answer")
	}
	w, why := s.quotas[0].effectiveWindow()
	if want := at.Add(2 * time.Millisecond).Sub(sentFirst); w < want {
		t.Fatalf("window %v found (%s); the window's earliest request went %v before the check's answer", w, why, want)
	}
	if w > 1100*time.Millisecond || !strings.Contains(why, "rounded up") {
		t.Fatalf("window %v found (%s), want about 1.06 s from the check", w, why)
	}
	if !s.resetsOverstateLocked() {
		t.Fatal("the spent quota's rounded-up reset is still paused on")
	}
}

// TestEarlyCheckRefused: the check's request refused (a window no whole
// number of seconds fits), the resets' window stands, the check is not
// made again, and the refusal is marked the check's, so that it does not
// turn spreading on.
func TestEarlyCheckRefused(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	reset := time.Unix(1_700_000_002, 0)
	s, read := earlySchedule()
	read(t0, 2*time.Millisecond, 0, reset, false)
	if !s.earlyPendingLocked() {
		t.Fatal("no check of the reset began at the spent quota")
	}
	read(s.early.at.Add(2*time.Millisecond), 2*time.Millisecond, 0, reset, true)
	if s.earlyPendingLocked() || !s.takeEarlyRefusalLocked() || s.takeEarlyRefusalLocked() {
		t.Fatal("the check's refusal was not taken for the check's, once")
	}
	if w, why := s.quotas[0].effectiveWindow(); w < reset.Sub(t0) || strings.Contains(why, "rounded up") {
		t.Fatalf("window %v (%s) after the check was refused: want the time to the reset, %v", w, why, reset.Sub(t0))
	}
	if s.resetsOverstateLocked() {
		t.Fatal("the resets are not paused on after the check was refused")
	}
	read(reset.Add(5*time.Millisecond), 2*time.Millisecond, 0, reset.Add(2*time.Second), false)
	if s.earlyPendingLocked() {
		t.Fatal("a second check began")
	}
}

// TestSpreadReasonSaysWhy: spreading an announced quota begun at a window
// boundary's check, without any refusal, is reported as such, not as a
// refusal within the quota (the text said so before).
func TestSpreadReasonSaysWhy(t *testing.T) {
	s := &learnSchedule{quotas: []quotaTrack{{name: "x", limit: 10, window: time.Second}}}
	s.estimatingLocked(time.Unix(1_700_000_000, 0), 10)
	_, source, reason := s.limitsLocked(nil, time.Minute)
	if source != "spread" || strings.Contains(reason, "refused") || !strings.Contains(reason, "boundary") {
		t.Fatalf("spreading begun at a boundary check reported as %q: %q", source, reason)
	}
	s = &learnSchedule{quotas: []quotaTrack{{name: "x", limit: 10, window: time.Second}}}
	now := time.Unix(1_700_000_000, 0)
	s.spreadLocked(true, now, now.Add(time.Second))
	if _, _, reason := s.limitsLocked(nil, time.Minute); !strings.Contains(reason, "refused within the announced quota") {
		t.Fatalf("spreading begun at a refusal reported as %q", reason)
	}
}

// TestEarlyCheckIdleRequestTellsNothing: the check pending, no request
// went before the reset (the caller was idle); the first one after it is
// accepted, as the reset says it would be, and tells nothing of the
// window: taking it for the check's would make the window as long as the
// caller was idle.
func TestEarlyCheckIdleRequestTellsNothing(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	reset := time.Unix(1_700_000_002, 0)
	s, read := earlySchedule()
	read(t0, 2*time.Millisecond, 0, reset, false)
	if !s.earlyPendingLocked() {
		t.Fatal("no check of the reset began at the spent quota")
	}
	later := reset.Add(10 * time.Minute)
	read(later, 2*time.Millisecond, 9, later.Add(time.Second).Truncate(time.Second), false)
	if s.earlyPendingLocked() {
		t.Fatal("the check is still pending")
	}
	if q := s.quotas[0]; q.arrivals != 0 {
		t.Fatalf("window %v found from a request sent after the reset", q.arrivals)
	}
}

// TestEarlyCheckDialectChange: the check pending, the next answer
// announces another quota (a server that changes its dialect): the check
// ends, the schedule does not go one request at a time for good, and a
// server that does so on every answer is checked at most maxEarlyChecks
// times.
func TestEarlyCheckDialectChange(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	reset := time.Unix(1_700_000_002, 0)
	s, read := earlySchedule()
	read(t0, 2*time.Millisecond, 0, reset, false)
	if !s.earlyPendingLocked() {
		t.Fatal("no check of the reset began at the spent quota")
	}
	other := announcement{name: "default", unit: unitRequests, limit: 10, remaining: 5, window: time.Second}
	s.learnQuotasLocked([]announcement{other}, t0.Add(5*time.Millisecond), false, time.Second, time.Minute)
	if s.earlyPendingLocked() || s.resetsOverstateLocked() {
		t.Fatal("the check outlived its quota")
	}
	begun := 1
	for i := range 10 {
		at := reset.Add(time.Duration(2*i) * time.Second)
		read(at.Add(5*time.Millisecond), 2*time.Millisecond, 0, at.Add(2*time.Second), false)
		if s.earlyPendingLocked() {
			begun++
		}
		s.learnQuotasLocked([]announcement{other}, at.Add(10*time.Millisecond), false, time.Second, time.Minute)
	}
	if begun > maxEarlyChecks {
		t.Fatalf("%d checks began, at most %d may", begun, maxEarlyChecks)
	}
}

// TestEarlyCheckAgainWhenLate: the check's answer read 80 ms late (its
// timer late on a loaded machine) finds the window 80 ms long; the next
// spent window checks again and finds it to within the margin. A refused
// check ends the checking: no refusal but one.
func TestEarlyCheckAgainWhenLate(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	reset := time.Unix(1_700_000_002, 0)
	s, read := earlySchedule()
	read(t0, 2*time.Millisecond, 0, reset, false)
	read(s.early.at.Add(80*time.Millisecond), 2*time.Millisecond, 9, reset.Add(time.Second), false)
	first := s.quotas[0].arrivals
	if first < time.Second+80*time.Millisecond {
		t.Fatalf("window %v found from an answer read 80 ms late", first)
	}
	// The next window's burst, 1.1 s on, spends the quota: the reset is
	// its first arrival plus 1 s, rounded up.
	t1 := t0.Add(first + 20*time.Millisecond)
	r1 := t1.Add(time.Second).Truncate(time.Second).Add(time.Second)
	read(t1, 2*time.Millisecond, 0, r1, false)
	if !s.earlyPendingLocked() {
		t.Fatal("no second check of a window found 80 ms long")
	}
	read(s.early.at.Add(2*time.Millisecond), 2*time.Millisecond, 9, r1.Add(time.Second), false)
	if got := s.quotas[0].arrivals; got >= first || got > time.Second+30*time.Millisecond {
		t.Fatalf("window %v after the second check (%v after the first)", got, first)
	}
	// A refused check stops the checking.
	s, read = earlySchedule()
	read(t0, 2*time.Millisecond, 0, reset, false)
	read(s.early.at.Add(80*time.Millisecond), 2*time.Millisecond, 9, reset.Add(time.Second), false)
	read(t1, 2*time.Millisecond, 0, r1, false)
	read(s.early.at.Add(2*time.Millisecond), 2*time.Millisecond, 0, r1, true)
	if !s.takeEarlyRefusalLocked() || s.quotas[0].arrivals != first {
		t.Fatalf("a refused second check changed the window found to %v (first %v)", s.quotas[0].arrivals, first)
	}
	t2 := t1.Add(first + 20*time.Millisecond)
	read(t2, 2*time.Millisecond, 0, t2.Add(time.Second).Truncate(time.Second).Add(time.Second), false)
	if s.earlyPendingLocked() {
		t.Fatal("a check began after one was refused")
	}
}
