package marble

import (
	"context"
	"flag"
	"strings"
	"syscall"
	"testing"
	"time"
)

// longMarble returns a cold marble of n values, one per frame, and its
// completion: the marble of the long runs and their benchmarks.
func longMarble(n int) string { return strings.Repeat("a", n) + "|" }

// bigRun plays a cold marble of n values, one per frame, through a Map and
// checks all n values and the completion arrive on their frames.
func bigRun(t *testing.T, n int) {
	marble := longMarble(n)
	Run(t, func(s *Scheduler) {
		out := s.Cold(marble, nil).Map(func(_ context.Context, v any) (any, error) { return v, nil })
		s.ExpectObservable(out).ToBe(marble, nil)
	})
}

// TestLongRun checks a long marble end to end; BenchmarkRun100k times one
// fifty times longer.
func TestLongRun(t *testing.T) {
	start := time.Now()
	bigRun(t, 2_000)
	t.Logf("2,000 events (2s of virtual time) in %v of real time", time.Since(start))
}

// BenchmarkRun100k measures a 100,000-event marble run (100 s of virtual
// time at 1ms frames) through a Map, parse and comparison included.
func BenchmarkRun100k(b *testing.B) { benchmarkRun(b, "Run100k", 100_000, bigRun) }

// benchmarkRun times run(t, n), a run of an n-event marble at 1ms frames,
// and reports its CPU time, events per second and virtual seconds.
//
// synctest.Test needs a *testing.T, which a benchmark does not have, so
// each iteration runs the run as a one-test suite through testing.RunTests
// (with -count and -v set aside: RunTests obeys them).
func benchmarkRun(b *testing.B, name string, n int, run func(t *testing.T, n int)) {
	match := func(pat, str string) (bool, error) { return true, nil }
	defer setFlag("test.v", "false")()
	defer setFlag("test.count", "1")()
	cpu0 := cpuTime()
	for b.Loop() {
		ok := testing.RunTests(match, []testing.InternalTest{{
			Name: name,
			F:    func(t *testing.T) { run(t, n) },
		}})
		if !ok {
			b.Fatalf("the %d-event run %s failed", n, name)
		}
	}
	// CPU time says more than wall time on a shared machine.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)*float64(time.Millisecond)/float64(time.Second), "virtual-s/op")
}

// setFlag sets a flag of the testing package and returns a func that
// restores it.
func setFlag(name, value string) func() {
	f := flag.Lookup(name)
	if f == nil {
		return func() {}
	}
	old := f.Value.String()
	_ = f.Value.Set(value)
	return func() { _ = f.Value.Set(old) }
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
