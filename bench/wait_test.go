package bench_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/rxthrottle/rxthrottle"
)

// The benchmarks measure the cost of a call when a token is free, side by
// side with the peers in one run, so benchstat can compare them. A
// one-nanosecond window renews every token before the next call, so nobody
// ever waits and the cost measured is the limiter's own.

// BenchmarkWaitFree compares Bucket.Wait with the peers' blocking calls,
// and with two floors: one clock read in a lock, and Take's steps.
func BenchmarkWaitFree(b *testing.B) {
	ctx := context.Background()
	b.Run("impl=rxthrottle", func(b *testing.B) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1000, time.Nanosecond))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := bucket.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A limit whose N is huge, as users write for "practically unlimited"
	// (issues 28 and 30): every admission is remembered for a window.
	for _, c := range []struct {
		name  string
		limit rxthrottle.Limit
	}{
		{"impl=rxthrottle-2e20-per-1ms", rxthrottle.Per(1<<20, time.Millisecond)},
		{"impl=rxthrottle-2e30-per-1s", rxthrottle.Per(1<<30, time.Second)},
	} {
		b.Run(c.name, func(b *testing.B) {
			bucket, err := rxthrottle.NewBucket(c.limit)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := bucket.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("impl=uber-ratelimit", func(b *testing.B) {
		rl := ratelimit.New(1e9, ratelimit.WithoutSlack) // 1 ns per call
		b.ReportAllocs()
		for b.Loop() {
			rl.Take()
		}
	})
	// The floors, as peers in the same run: what a Wait that reads the
	// monotonic clock once under a sync.Mutex costs with nothing else to
	// do (SPEC.md, "On the real clock": the reading is taken with the lock
	// held), and what Take's own steps cost, time.Now (which reads the
	// wall and the monotonic clocks) and one compare-and-swap.
	b.Run("impl=floor-since-in-lock", func(b *testing.B) {
		var mu sync.Mutex
		base := time.Now()
		var last int64
		for b.Loop() {
			mu.Lock()
			last = max(last, int64(time.Since(base)))
			mu.Unlock()
		}
	})
	b.Run("impl=floor-now-cas", func(b *testing.B) {
		var last atomic.Int64
		for b.Loop() {
			now := time.Now().UnixNano()
			last.CompareAndSwap(last.Load(), now)
		}
	})
	b.Run("impl=x-time-rate", func(b *testing.B) {
		lim := rate.NewLimiter(rate.Limit(1e9), 1000)
		b.ReportAllocs()
		for b.Loop() {
			if err := lim.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
