package adaptive

import (
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// driver runs rounds of calls on a Limiter: each round, cap calls start
// together, every one finding the cap full if full, and end lat later.
type driver struct {
	l   *Limiter
	now int64
}

// round runs one round of calls of latency lat and returns the cap after.
func (d *driver) round(lat int64, full bool) int {
	c := max(d.l.Cap(), 4)
	open := d.l.Cap()
	if !full {
		open = 0
	}
	start := d.now
	d.now += lat
	for range c {
		d.l.Sample(start, d.now, open)
	}
	d.now++
	return d.l.Cap()
}

type step struct {
	lat  int64 // the round's latency
	full bool
	want int // the cap after it
}

func run(t *testing.T, cfg Config, steps []step) *driver {
	t.Helper()
	d := &driver{l: New(cfg), now: 1}
	for i, s := range steps {
		if got := d.round(s.lat, s.full); got != s.want {
			t.Fatalf("step %d (latency %v, full %v): Cap = %d, want %d", i, time.Duration(s.lat), s.full, got, s.want)
		}
	}
	return d
}

func TestSlowStartDoublesToMax(t *testing.T) {
	run(t, Config{Min: 2, Max: 40}, []step{
		{10 * ms, true, 4}, {10 * ms, true, 8}, {10 * ms, true, 16}, {10 * ms, true, 32}, {10 * ms, true, 40}, {10 * ms, true, 40},
	})
}

func TestIdleRoundsDoNotGrow(t *testing.T) {
	run(t, Config{Min: 2, Max: 40}, []step{
		{10 * ms, false, 2}, {10 * ms, false, 2}, {10 * ms, true, 4}, {10 * ms, false, 4},
	})
}

func TestSlowRoundCutsByGradient(t *testing.T) {
	run(t, Config{Min: 1, Max: 64}, []step{
		{10 * ms, true, 2}, {10 * ms, true, 4}, {10 * ms, true, 8}, {10 * ms, true, 16}, {10 * ms, true, 32},
		{16 * ms, true, 22}, // 32 × 11/16
		{100 * ms, true, 5}, // at most to a quarter: 5.5
		{10 * ms, true, 6},  // no more slow start: +max(1, cap/8)
		{10 * ms, true, 7}, {10 * ms, true, 8}, {10 * ms, true, 9}, {10 * ms, true, 10},
		{11 * ms, true, 12}, // within the tolerance
	})
}

func TestBelowMinStaysAtMin(t *testing.T) {
	run(t, Config{Min: 3, Max: 8}, []step{
		{10 * ms, true, 6}, {40 * ms, true, 3}, {80 * ms, true, 3}, {160 * ms, true, 3},
	})
}

// TestCallsOfAnOlderRoundDoNotCount: after a cut, the calls that started
// before it end late too; they must not cut again.
func TestCallsOfAnOlderRoundDoNotCount(t *testing.T) {
	l := New(Config{Min: 1, Max: 64})
	now := int64(1)
	for range 4 { // to 16
		for range max(l.Cap(), 4) {
			l.Sample(now, now+10*ms, l.Cap())
		}
		now += 10*ms + 1
	}
	if l.Cap() != 16 {
		t.Fatalf("Cap = %d, want 16", l.Cap())
	}
	start := now
	for range 16 { // a slow round: cut to 8
		l.Sample(start, start+20*ms, 16)
	}
	if l.Cap() != 8 {
		t.Fatalf("after a slow round Cap = %d, want 8", l.Cap())
	}
	for range 40 { // calls that started with the slow round end later still
		if l.Sample(start, start+50*ms, 16) {
			t.Fatalf("a call of an older round moved the cap to %d", l.Cap())
		}
	}
}

// TestBaselineRisesSlowly: when every call turns slow for good (the
// server itself got slower), the baseline follows, by about 60% in a
// Baseline at most; so the cap stays low for a while, then grows again.
func TestBaselineRisesSlowly(t *testing.T) {
	d := &driver{l: New(Config{Min: 1, Max: 64, Baseline: 8 * time.Second}), now: 1}
	for range 5 {
		d.round(10*ms, true)
	}
	for d.now < int64(8*time.Second) {
		d.round(30*ms, true)
	}
	if b := d.l.Baseline(); b > 17*time.Millisecond || b < 10*time.Millisecond {
		t.Fatalf("after a Baseline of slow calls: baseline %v, want 10ms to 17ms", b)
	}
	if c := d.l.Cap(); c > 2 {
		t.Fatalf("after a Baseline of slow calls: Cap %d, want at most 2", c)
	}
	for d.now < int64(40*time.Second) {
		d.round(30*ms, true)
	}
	if b := d.l.Baseline(); b != 30*time.Millisecond {
		t.Fatalf("after five Baselines of slow calls: baseline %v, want 30ms", b)
	}
	if c := d.l.Cap(); c < 32 {
		t.Fatalf("after five Baselines of slow calls: Cap %d, want it grown back", c)
	}
}

// TestFewFastCallsKeepTheBaseline: in a long incident where most calls
// are slow but the cap is cut to where calls are fast again, the
// baseline does not drift up.
func TestFewFastCallsKeepTheBaseline(t *testing.T) {
	d := &driver{l: New(Config{Min: 1, Max: 64, Baseline: 4 * time.Second}), now: 1}
	// A server fast up to 6 calls in flight, slow above.
	lat := func(c int) int64 {
		if c <= 6 {
			return 10 * ms
		}
		return int64(c*c) * 10 * ms / 36
	}
	for d.now < int64(60*time.Second) {
		d.round(lat(d.l.Cap()), true)
		if b := d.l.Baseline(); b != 10*time.Millisecond {
			t.Fatalf("at %v: baseline %v, want 10ms", time.Duration(d.now), b)
		}
		if c := d.l.Cap(); c > 12 && d.now > int64(time.Second) {
			t.Fatalf("at %v: Cap %d, want it near 6", time.Duration(d.now), c)
		}
	}
}
