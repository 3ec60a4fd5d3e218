package rxthrottle_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// meteringCase is one call BenchmarkMetering and TestPairedMetering time:
// op makes one call, on a limiter made once for the case.
type meteringCase struct {
	name string
	op   func() error
}

// meteringCases are what each metering option costs a call that finds its
// token free (a one-nanosecond window): Wait with no option, with
// WithConcurrency, WithMaxQueue, on a context with a priority or a
// deadline, and Acquire ended by Release against ReleaseN (of as much, of
// less, of a debt), with and without WithConcurrency, and Unlimited's Wait.
// The contexts live until tb ends.
func meteringCases(tb testing.TB) []meteringCase {
	per := rxthrottle.Per(1000, time.Nanosecond)
	bucket := func(opts ...rxthrottle.Option) *rxthrottle.Bucket {
		bk, err := rxthrottle.NewBucket(per, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		return bk
	}
	ctx := context.Background()
	dctx, cancel := context.WithTimeout(ctx, time.Hour)
	tb.Cleanup(cancel)
	wait := func(bk *rxthrottle.Bucket, ctx context.Context) func() error {
		return func() error { return bk.Wait(ctx) }
	}
	acquire := func(bk *rxthrottle.Bucket, end func(rxthrottle.Token) error) func() error {
		return func() error {
			tok, err := bk.AcquireN(ctx, 2)
			if err != nil {
				return err
			}
			return end(tok)
		}
	}
	release := func(tok rxthrottle.Token) error { tok.Release(); return nil }
	releaseN := func(n int) func(rxthrottle.Token) error {
		return func(tok rxthrottle.Token) error { return tok.ReleaseN(n) }
	}
	return []meteringCase{
		{"op=wait/opt=none", wait(bucket(), ctx)},
		{"op=wait/opt=concurrency", wait(bucket(rxthrottle.WithConcurrency(4)), ctx)},
		{"op=wait/opt=maxqueue", wait(bucket(rxthrottle.WithMaxQueue(16)), ctx)},
		{"op=wait/opt=priority", wait(bucket(), rxthrottle.WithPriority(ctx, 1))},
		{"op=wait/opt=deadline", wait(bucket(), dctx)},
		{"op=acquire/end=release", acquire(bucket(), release)},
		{"op=acquire/end=release/opt=concurrency", acquire(bucket(rxthrottle.WithConcurrency(4)), release)},
		{"op=acquire/end=releaseN-same", acquire(bucket(), releaseN(2))},
		{"op=acquire/end=releaseN-less", acquire(bucket(), releaseN(1))},
		{"op=acquire/end=releaseN-debt", acquire(bucket(), releaseN(5))},
		{"op=unlimited-wait", func() error { return rxthrottle.Unlimited().Wait(ctx) }},
	}
}

// BenchmarkMetering measures each of meteringCases.
func BenchmarkMetering(b *testing.B) {
	for _, c := range meteringCases(b) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPairedMetering estimates each option's cost on a loaded machine,
// where the load drifts faster than a benchmark's second (as bench's
// TestPairedWaitFree does for Wait against Take): it times short bursts of
// a case and of its base in turn (Wait with no option for the waits,
// Acquire ended by Release for the acquires) and logs the median of the
// pairs' ratios with their middle half. It runs only with
// RXTHROTTLE_PAIRED=1.
func TestPairedMetering(t *testing.T) {
	if os.Getenv("RXTHROTTLE_PAIRED") == "" {
		t.Skip("set RXTHROTTLE_PAIRED=1 to run")
	}
	const pairs, burst = 500, 5000
	cases := meteringCases(t)
	byName := map[string]meteringCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	timeIt := func(op func() error) float64 {
		start := time.Now()
		for range burst {
			if err := op(); err != nil {
				t.Fatal(err)
			}
		}
		return float64(time.Since(start)) / burst
	}
	for _, c := range cases[1:] {
		base := byName["op=wait/opt=none"]
		if c.name[:len("op=acquire")] == "op=acquire" && c.name != "op=acquire/end=release" {
			base = byName["op=acquire/end=release"]
		}
		var ratios, costs []float64
		for i := range pairs {
			var a, b float64
			if i%2 == 0 { // alternate which goes first
				a, b = timeIt(c.op), timeIt(base.op)
			} else {
				b, a = timeIt(base.op), timeIt(c.op)
			}
			ratios, costs = append(ratios, a/b), append(costs, a)
		}
		slices.Sort(ratios)
		slices.Sort(costs)
		t.Logf("%-40s / %-24s median %.3fx (middle half %.3f-%.3f), %.1f ns", c.name, base.name,
			ratios[pairs/2], ratios[pairs/4], ratios[3*pairs/4], costs[pairs/2])
	}
}
