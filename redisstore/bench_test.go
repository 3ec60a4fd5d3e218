package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/internal/redistest"
)

// BenchmarkAdmission measures admissions per second through one local
// redis-server, against github.com/go-redis/redis_rate/v10's Allow and a
// plain PING (the round-trip floor). The limits never make a caller wait, so
// the figures are the cost of the round trip and the script. Run with
// -cpu 1,8: RunParallel then uses 1 and 8 goroutines.
func BenchmarkAdmission(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	// A huge N over a short window: nobody waits, and the list of
	// emissions stays as short as 1ms of traffic.
	limit := rxthrottle.Per(1<<30, time.Millisecond)

	b.Run("impl=redisstore.Wait", func(b *testing.B) {
		bk, err := NewBucket(rdb, "bench-wait", limit)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := bk.Wait(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("impl=redisstore.Wait+timeout", func(b *testing.B) {
		bk, err := NewBucket(rdb, "bench-wait-timeout", limit, WithTimeout(time.Second))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := bk.Wait(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("impl=redisstore.Allow", func(b *testing.B) {
		bk, err := NewBucket(rdb, "bench-allow", limit)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if ok, err := bk.Allow(ctx); err != nil || !ok {
					b.Errorf("Allow = %v, %v", ok, err)
					return
				}
			}
		})
	})
	b.Run("impl=redis_rate.Allow", func(b *testing.B) {
		lim := redis_rate.NewLimiter(rdb)
		l := redis_rate.Limit{Rate: 1 << 30, Burst: 1 << 30, Period: time.Second}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if r, err := lim.Allow(ctx, "bench-rate", l); err != nil || r.Allowed != 1 {
					b.Errorf("Allow = %+v, %v", r, err)
					return
				}
			}
		})
	})
	b.Run("impl=Ping", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := rdb.Ping(ctx).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
