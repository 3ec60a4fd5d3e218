package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/ratelimit"

	"github.com/rxthrottle/rxthrottle"
)

// TestPairedWaitFree estimates Bucket.Wait's cost over uber's Take on a
// loaded machine, where the load drifts faster than a benchmark's second:
// it times short bursts of each in turn (a pair every millisecond or so) and
// reports the median of the pairs' ratios, and each one's median cost. It
// runs only with RXTHROTTLE_PAIRED=1 (bench/run.sh's suite paired);
// RXTHROTTLE_PAIRED_LIMIT=N/W sets the Bucket's limit (Per(1000, 1ns)).
func TestPairedWaitFree(t *testing.T) {
	if os.Getenv("RXTHROTTLE_PAIRED") == "" {
		t.Skip("set RXTHROTTLE_PAIRED=1 to run")
	}
	const pairs, burst = 2000, 10_000
	ctx := context.Background()
	limit := rxthrottle.Per(1000, time.Nanosecond)
	if s := os.Getenv("RXTHROTTLE_PAIRED_LIMIT"); s != "" { // N/W, e.g. 1073741824/1s
		var n int
		var w string
		if _, err := fmt.Sscanf(strings.Replace(s, "/", " ", 1), "%d %s", &n, &w); err != nil {
			t.Fatalf("RXTHROTTLE_PAIRED_LIMIT=%s: want N/W: %v", s, err)
		}
		d, err := time.ParseDuration(w)
		if err != nil {
			t.Fatalf("RXTHROTTLE_PAIRED_LIMIT=%s: %v", s, err)
		}
		limit = rxthrottle.Per(n, d)
	}
	bucket, err := rxthrottle.NewBucket(limit)
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
	t.Logf("Bucket.Wait (%v) / Take: median of %d paired bursts %.3fx; medians %.1f ns and %.1f ns", limit, pairs, med(ratios), med(rxs), med(ubers))
}
