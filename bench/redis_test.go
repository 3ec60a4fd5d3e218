package bench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// BenchmarkAdmission measures admissions per second through one local
// redis-server, against github.com/go-redis/redis_rate/v10's Allow and a
// plain PING (the round-trip floor). The limits never make a caller wait, so
// the figures are the cost of the round trip and the script. Run with
// -cpu 1,8: RunParallel then uses 1 and 8 goroutines.
//
// Besides ns/op it reports, per admission, server-µs/op: the time Redis
// spent executing the command (EVALSHA or PING, every call of it: for
// Acquire+Release both scripts), from INFO commandstats, which separates
// the script's own cost from the network and the client; and calls/op,
// the calls of that command per admission (under 1 when group commit
// batches the admissions of several goroutines in one script run); and
// srv-cpu-µs/op and cli-cpu-µs/op, the CPU time of Redis's main thread
// and of this process per admission (see BenchmarkRedisFloor).
func BenchmarkAdmission(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	// A huge N over a short window: nobody waits, and the list of
	// emissions stays as short as 1ms of traffic.
	limit := rxthrottle.Per(1<<30, time.Millisecond)

	run := func(b *testing.B, command string, admit func() error) {
		b.Helper()
		if _, err := srv.Do("CONFIG", "RESETSTAT"); err != nil {
			b.Fatal(err)
		}
		srv0, cli0 := serverCPU(b, srv), clientCPU(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := admit(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.StopTimer()
		reportCPU(b, srv, command, srv0, cli0)
	}

	b.Run("impl=redisstore.Wait", func(b *testing.B) {
		bk, err := redisstore.NewBucket(rdb, "bench-wait", limit)
		if err != nil {
			b.Fatal(err)
		}
		run(b, "evalsha", func() error { return bk.Wait(ctx) })
	})
	b.Run("impl=redisstore.Wait+timeout", func(b *testing.B) {
		bk, err := redisstore.NewBucket(rdb, "bench-wait-timeout", limit, redisstore.WithTimeout(time.Second))
		if err != nil {
			b.Fatal(err)
		}
		run(b, "evalsha", func() error { return bk.Wait(ctx) })
	})
	b.Run("impl=redisstore.Acquire+Release", func(b *testing.B) {
		bk, err := redisstore.NewBucket(rdb, "bench-acquire", limit)
		if err != nil {
			b.Fatal(err)
		}
		run(b, "evalsha", func() error {
			tok, err := bk.Acquire(ctx)
			tok.Release()
			return err
		})
	})
	b.Run("impl=redisstore.Allow", func(b *testing.B) {
		bk, err := redisstore.NewBucket(rdb, "bench-allow", limit)
		if err != nil {
			b.Fatal(err)
		}
		run(b, "evalsha", func() error {
			if ok, err := bk.Allow(ctx); err != nil || !ok {
				return fmt.Errorf("Allow = %v, %v", ok, err)
			}
			return nil
		})
	})
	// A Keyed limiter's key, without and with a tier (WithKeyLimits: the
	// function per admission, its limits encoded, the cached limit set).
	b.Run("impl=redisstore.Keyed.Wait", func(b *testing.B) {
		k, err := redisstore.NewKeyed(rdb, "bench-keyed", limit)
		if err != nil {
			b.Fatal(err)
		}
		run(b, "evalsha", func() error { return k.Wait(ctx, "user") })
	})
	b.Run("impl=redisstore.Keyed.Wait+tier", func(b *testing.B) {
		tier := []rxthrottle.Limit{rxthrottle.Per(1<<29, time.Millisecond)}
		k, err := redisstore.NewKeyed(rdb, "bench-tier", limit, rxthrottle.WithKeyLimits(func(string) []rxthrottle.Limit { return tier }))
		if err != nil {
			b.Fatal(err)
		}
		run(b, "evalsha", func() error { return k.Wait(ctx, "user") })
	})
	b.Run("impl=redis_rate.Allow", func(b *testing.B) {
		lim := redis_rate.NewLimiter(rdb)
		l := redis_rate.Limit{Rate: 1 << 30, Burst: 1 << 30, Period: time.Second}
		run(b, "evalsha", func() error {
			if r, err := lim.Allow(ctx, "bench-rate", l); err != nil || r.Allowed != 1 {
				return fmt.Errorf("Allow = %+v, %v", r, err)
			}
			return nil
		})
	})
	b.Run("impl=Ping", func(b *testing.B) {
		run(b, "ping", func() error { return rdb.Ping(ctx).Err() })
	})
}
