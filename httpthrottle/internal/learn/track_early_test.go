package learn

import (
	"strings"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
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

// earlyWindow reads a spent window of 10 at t0 whose reset is reset, and
// returns when the checked window may begin (the hold) and its held-back
// requests' times after its first.
func earlyWindow(t *testing.T, s *learnSchedule, read func(time.Time, time.Duration, int64, time.Time, bool), t0, reset time.Time) (time.Time, []time.Duration) {
	t.Helper()
	for i := range 10 {
		read(t0.Add(time.Duration(i)*time.Millisecond), 2*time.Millisecond, int64(9-i), reset, false)
	}
	if !s.earlyPendingLocked() || s.hold.IsZero() {
		t.Fatal("no check began at the spent quota")
	}
	limits, _, _ := s.limitsLocked(nil, time.Minute)
	for _, x := range s.early.xs {
		if !containsLimit(limits, x) {
			t.Fatalf("no limit holds a request back %v (limits %v)", x, limits)
		}
	}
	return s.hold, append([]time.Duration(nil), s.early.xs...)
}

func containsLimit(limits []rxthrottle.Limit, w time.Duration) bool {
	for _, l := range limits {
		if l.Window == w {
			return true
		}
	}
	return false
}

// TestEarlyCheckFindsWindow: a sliding log of 10 per 1 s whose resets are
// rounded up to whole seconds (10 per 2 s from the resets alone). The
// checked window's first 6 go at once; the first held-back request, a
// second and a margin later, is answered with 9 left: the server counts
// none of the 6 besides it, so the window is at most the time from the
// window's first send to that answer, and the resets are no longer paused
// on. No request was refused: the held-back one was the window's 7th.
func TestEarlyCheckFindsWindow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	s, read := earlySchedule()
	hold, xs := earlyWindow(t, s, read, t0, time.Unix(1_700_000_002, 0))
	if xs[0] != time.Second+earlyMargin {
		t.Fatalf("first held back %v, want the whole second above the resets' shortest window", xs[0])
	}
	t1 := hold.Add(time.Millisecond)
	r1 := time.Unix(t1.Add(time.Second).Unix()+1, 0) // t1 + 1 s rounded up
	for i := range 6 {
		read(t1.Add(2*time.Millisecond), 2*time.Millisecond, int64(9-i), r1, false)
	}
	at := t1.Add(xs[0] + 3*time.Millisecond)
	read(at, 2*time.Millisecond, 9, r1.Add(time.Second), false)
	w, why := s.quotas[0].effectiveWindow()
	if want := at.Sub(t1); w != want || !strings.Contains(why, "held back") {
		t.Fatalf("window %v (%s), want %v, the first send to the answer", w, why, want)
	}
	if !s.resetsOverstateLocked() || s.earlyPendingLocked() {
		t.Fatal("the rounded-up resets are still paused on, or the check still runs")
	}
}

// TestEarlyCheckFixedWindowTellsNothing: a fixed window ending where its
// resets say counts every request of the window until then: the
// held-back answers say so (all counted), no window is found, and an
// answer read after the window's reset, in the fixed window's next
// window (9 left), is not taken for one either.
func TestEarlyCheckFixedWindowTellsNothing(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	for _, late := range []bool{false, true} {
		s, read := earlySchedule()
		hold, xs := earlyWindow(t, s, read, t0, time.Unix(1_700_000_002, 0))
		t1 := hold.Add(time.Millisecond)
		end := t1.Add(xs[len(xs)-1] - 20*time.Millisecond).Truncate(time.Second) // the fixed window's end
		if late {
			end = t1.Add(xs[0] - 50*time.Millisecond)
		}
		for i := range 6 {
			read(t1.Add(2*time.Millisecond), 2*time.Millisecond, int64(9-i), end, false)
		}
		for j, x := range xs {
			at := t1.Add(x + 3*time.Millisecond)
			if at.Before(end) {
				read(at, 2*time.Millisecond, int64(3-j), end, false)
			} else {
				read(at, 2*time.Millisecond, 9, end.Add(2*time.Second), false)
			}
		}
		if q := s.quotas[0]; q.arrivals != 0 || s.resetsOverstateLocked() {
			t.Fatalf("late %v: window %v found at a fixed window", late, q.arrivals)
		}
		if s.earlyPendingLocked() {
			t.Fatalf("late %v: the check still runs after its last held-back answer", late)
		}
	}
}

// TestEarlyCheckRefusedStops: a held-back request refused (the server
// counts others' requests too) ends the checks: no other begins.
func TestEarlyCheckRefusedStops(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	s, read := earlySchedule()
	hold, xs := earlyWindow(t, s, read, t0, time.Unix(1_700_000_002, 0))
	t1 := hold.Add(time.Millisecond)
	r1 := time.Unix(t1.Unix()+2, 0)
	read(t1.Add(2*time.Millisecond), 2*time.Millisecond, 9, r1, false)
	read(t1.Add(xs[0]+3*time.Millisecond), 2*time.Millisecond, 0, r1, true)
	if s.earlyPendingLocked() || !s.early.stop {
		t.Fatal("the check runs on after a held-back request was refused")
	}
	t2 := r1.Add(5 * time.Millisecond)
	for i := range 10 {
		read(t2, 2*time.Millisecond, int64(9-i), time.Unix(t2.Unix()+2, 0), false)
	}
	if s.earlyPendingLocked() {
		t.Fatal("a check began after one was refused")
	}
}

// TestEarlyCheckDialectChange: the check running, the next answer
// announces another quota (a server that changes its dialect): the check
// ends, no request is held back for good, and no other begins.
func TestEarlyCheckDialectChange(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300*int64(time.Millisecond))
	s, read := earlySchedule()
	earlyWindow(t, s, read, t0, time.Unix(1_700_000_002, 0))
	other := announcement{name: "default", unit: unitRequests, limit: 10, remaining: 5, window: time.Second}
	s.learnQuotasLocked([]announcement{other}, t0.Add(15*time.Millisecond), false, time.Second, time.Minute)
	if s.earlyPendingLocked() || s.resetsOverstateLocked() {
		t.Fatal("the check outlived its quota")
	}
	for i := range 10 {
		at := t0.Add(time.Duration(2*i+2) * time.Second)
		read(at, 2*time.Millisecond, 0, time.Unix(at.Unix()+2, 0), false)
		if s.earlyPendingLocked() {
			t.Fatal("a check began after the dialect changed")
		}
		s.learnQuotasLocked([]announcement{other}, at.Add(10*time.Millisecond), false, time.Second, time.Minute)
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
