package guard_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/guard/storetest"
)

// BenchmarkCheckOneKey is the cost of one allowed Check on a hot key (the
// real clock: the window never fills at b.N below a billion).
func BenchmarkCheckOneKey(b *testing.B) {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1<<30, time.Hour)}, guard.WithLogger(discard))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Check(ctx, "alice"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckRefused is the cost of refusing a blocked key.
func BenchmarkCheckRefused(b *testing.B) {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Hour), Block: time.Hour}, guard.WithLogger(discard))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	_, _ = g.Check(ctx, "alice")
	_, _ = g.Check(ctx, "alice")
	b.ReportAllocs()
	for b.Loop() {
		_, _ = g.Check(ctx, "alice")
	}
}

// BenchmarkCheckParallel spreads Checks of 1024 keys over GOMAXPROCS
// goroutines: run with -cpu 1,2 to see how the store's one mutex scales.
func BenchmarkCheckParallel(b *testing.B) {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1<<30, time.Hour)}, guard.WithLogger(discard))
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "user" + strconv.Itoa(i)
	}
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(1) * 7919
		ctx := context.Background()
		for pb.Next() {
			i++
			if _, err := g.Check(ctx, keys[i%uint64(len(keys))]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkNewKeys touches b.N keys once each and reports the heap bytes
// each live key holds (key string of 10 bytes included).
func BenchmarkNewKeys(b *testing.B) {
	mock := clock.NewMock()
	mock.Set(storetest.T0())
	s, err := guard.NewMemoryStore(0)
	if err != nil {
		b.Fatal(err)
	}
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(30, time.Hour)}, guard.WithStore(s),
		guard.WithClock(mock), guard.WithLogger(discard))
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, b.N)
	for i := range keys {
		keys[i] = "u" + strconv.Itoa(1e9 + i)[1:] // 10 bytes each
	}
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for _, k := range keys {
		if _, err := g.Check(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if live, _ := s.Keys(mock.Now()); live != b.N {
		b.Fatalf("live keys = %d, want %d", live, b.N)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "B/key")
	runtime.KeepAlive(keys)
}
