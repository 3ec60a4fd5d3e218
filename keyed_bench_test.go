package rxthrottle_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// BenchmarkKeyedNewKeys touches 1,000,000 keys once each, within the window
// so none may be forgotten, and reports the heap each idle key keeps.
func BenchmarkKeyedNewKeys(b *testing.B) {
	const keys = 1_000_000
	names := keyNames(keys)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		k, err := rxthrottle.NewKeyed(rxthrottle.Per(5, time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, name := range names {
			if err := k.Wait(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/keys, "B/idle-key")
		if got := k.Stats().KeysLive; got != keys {
			b.Fatalf("%d keys live, want %d", got, keys)
		}
		runtime.KeepAlive(k)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/Wait")
}

// BenchmarkKeyedWait measures Wait on live keys whose tokens are free, from
// parallel goroutines; run it with -cpu 1,2 to see it scale. With
// keys=disjoint each goroutine has keys of its own (one server goroutine per
// user); with keys=shared every goroutine walks all 1,024 keys, so each
// key's memory moves between cores on most calls. keys=own is the
// reference for perfect scaling: each goroutine calls a Keyed of its own
// with the keys it has under keys=disjoint, so nothing at all is shared.
func BenchmarkKeyedWait(b *testing.B) {
	for _, keys := range []string{"disjoint", "shared", "own"} {
		b.Run("keys="+keys, func(b *testing.B) {
			const nkeys, maxGoroutines = 1024, 8
			names := keyNames(nkeys)
			limiters := make([]*rxthrottle.Keyed, maxGoroutines)
			for g := range limiters {
				if g == 0 || keys == "own" {
					limiters[g] = newLiveKeys(b, names)
				} else {
					limiters[g] = limiters[0]
				}
			}
			ctx := context.Background()
			var goroutines atomic.Uint32
			startAfterSetup(b)
			b.RunParallel(func(pb *testing.PB) {
				g := goroutines.Add(1) - 1
				k := limiters[g%maxGoroutines]
				stride, i := uint32(1), g*7919
				if keys != "shared" { // keys g, g+8, g+16... for up to 8 goroutines
					stride, i = maxGoroutines, g
				}
				for pb.Next() {
					i += stride
					if err := k.Wait(ctx, names[i%nkeys]); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// newLiveKeys returns a Keyed on which every name is a live key in its
// steady state.
func newLiveKeys(b *testing.B, names []string) *rxthrottle.Keyed {
	// The margin keeps keys whose 1ns window has passed, to measure Wait on
	// live keys rather than forgetting and re-making them.
	k, err := rxthrottle.NewKeyed(rxthrottle.Per(10, time.Nanosecond), rxthrottle.WithIdleMargin(time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range names {
		// Enough calls to fill the ring and for Keyed to give it cache
		// lines of its own (every 32nd call): the steady state.
		for range 64 {
			if err := k.Wait(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
	}
	return k
}

// keyNames returns n keys: "user-0", "user-1"...
func keyNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "user-" + strconv.Itoa(i)
	}
	return names
}

// startAfterSetup starts the timer of a benchmark whose setup made
// garbage. The garbage is collected first: a collection still running
// would take a share of the processors from the first measurements (with
// -cpu 1, about 40 ns a Keyed call).
func startAfterSetup(b *testing.B) {
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
}
