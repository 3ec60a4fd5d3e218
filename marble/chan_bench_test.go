package marble

import (
	"strings"
	"testing"
	"time"
)

// bigChanRun plays a cold channel of n values, one per frame, through a
// goroutine that copies it to another channel (the channel counterpart of
// bigRun's Map), and checks all n values and the close arrive on their
// frames.
func bigChanRun(t *testing.T, n int) {
	marble := strings.Repeat("a", n) + "|"
	Run(t, func(s *Scheduler) {
		in := ColdChan[string](s, marble, nil)
		out := make(chan string)
		go func() {
			defer close(out)
			for v := range in {
				out <- v
			}
		}()
		ExpectChan(s, out).ToBe(marble, nil)
	})
}

// TestChanLongRun checks a long channel marble end to end;
// BenchmarkChanRun100k times one fifty times longer.
func TestChanLongRun(t *testing.T) {
	start := time.Now()
	bigChanRun(t, 2_000)
	t.Logf("2,000 channel values (2s of virtual time) in %v of real time", time.Since(start))
}

// BenchmarkChanRun100k is BenchmarkRun100k over channels: a 100,000-value
// ColdChan (100 s of virtual time at 1ms frames) through a copying
// goroutine to ExpectChan, parse and comparison included.
func BenchmarkChanRun100k(b *testing.B) {
	const n = 100_000
	match := func(pat, str string) (bool, error) { return true, nil }
	defer setFlag("test.v", "false")()
	defer setFlag("test.count", "1")()
	cpu0 := cpuTime()
	for b.Loop() {
		ok := testing.RunTests(match, []testing.InternalTest{{
			Name: "ChanRun100k",
			F:    func(t *testing.T) { bigChanRun(t, n) },
		}})
		if !ok {
			b.Fatal("the 100,000-value channel run failed")
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)*float64(time.Millisecond)/float64(time.Second), "virtual-s/op")
}
