package bench_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"go.uber.org/ratelimit"

	"github.com/rxthrottle/rxthrottle"
)

// TestPairedWaitFree estimates Bucket.Wait's cost over uber's Take on a
// loaded machine, where the load drifts faster than a benchmark's second:
// it times short bursts of each in turn (a pair every millisecond or so) and
// reports the median of the pairs' ratios, and each one's median cost. It
// runs only with RXTHROTTLE_PAIRED=1 (bench/run.sh's suite paired).
func TestPairedWaitFree(t *testing.T) {
	if os.Getenv("RXTHROTTLE_PAIRED") == "" {
		t.Skip("set RXTHROTTLE_PAIRED=1 to run")
	}
	const pairs, burst = 2000, 10_000
	ctx := context.Background()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1000, time.Nanosecond))
	if err != nil {
		t.Fatal(err)
	}
	rl := ratelimit.New(1e9, ratelimit.WithoutSlack)
	timeIt := func(f func()) float64 {
		start := time.Now()
		for range burst {
			f()
		}
		return float64(time.Since(start)) / burst
	}
	rx := func() { _ = bucket.Wait(ctx) }
	uber := func() { rl.Take() }
	var ratios, rxs, ubers []float64
	for i := range pairs {
		var a, b float64
		if i%2 == 0 { // alternate which goes first
			a, b = timeIt(rx), timeIt(uber)
		} else {
			b, a = timeIt(uber), timeIt(rx)
		}
		ratios, rxs, ubers = append(ratios, a/b), append(rxs, a), append(ubers, b)
	}
	med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	t.Logf("Bucket.Wait / Take: median of %d paired bursts %.3fx; medians %.1f ns and %.1f ns", pairs, med(ratios), med(rxs), med(ubers))
}
