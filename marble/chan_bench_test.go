package marble

import (
	"testing"
	"time"
)

// bigChanRun plays a cold channel of n values, one per frame, through a
// goroutine that copies it to another channel (the channel counterpart of
// bigRun's Map), and checks all n values and the close arrive on their
// frames.
func bigChanRun(t *testing.T, n int) {
	marble := longMarble(n)
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
func BenchmarkChanRun100k(b *testing.B) { benchmarkRun(b, "ChanRun100k", 100_000, bigChanRun) }
