package bench_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// stateScript does the least a script with a held-token state must do: read
// Redis's time, read the state hash, write it back (the fields
// batchScript reads and writes). stateZaddScript adds what an admission
// also records: its completion, in a ZSET.
var (
	stateScript = redis.NewScript(`
local t = redis.call('TIME')
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'q', 'm', 'x')
local s = (tonumber(st[3]) or 0) + 1
redis.call('HSET', KEYS[3], 'l', t[1], 'q', t[2], 's', s, 'm', t[1])
return {1, 0, 0, s}
`)
	stateZaddScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'q', 'm', 'x')
local s = (tonumber(st[3]) or 0) + 1
redis.call('ZADD', KEYS[1], now, s)
if s % 16 == 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 1000) end
redis.call('HSET', KEYS[3], 'l', now, 'q', now, 's', s, 'm', now)
return {1, now, 0, s}
`)
)

// BenchmarkRedisFloor measures the floors of one round trip per call
// through one local redis-server, to set BenchmarkAdmission's figures
// against: a PING, an EVALSHA of "return 1" (a script run; "return1", as
// a final "-1" would read as -cpu 1 to benchstat), of a script
// that only reads Redis's time, reads a state hash and writes it back
// (state), and of one that also adds a member to a ZSET and trims it
// (state+zadd: the four things an admission of a held-token schedule
// does), and Ping+wake4 (one goroutine's PINGs, each followed by the
// wake-up of 4 goroutines parked on channels, group commit's hand-over).
// Run with -cpu 1,2,8: RunParallel's goroutines, and GOMAXPROCS. Per call it
// reports server-µs/op (INFO commandstats: the command's own time),
// srv-cpu-µs/op (the CPU time of Redis's main thread, network I/O
// included) and cli-cpu-µs/op (this process's CPU time, user and
// system): with one goroutine a call costs about their sum, as the
// client and the server take turns.
func BenchmarkRedisFloor(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	keys := []string{"{floor}d", "{floor}h", "{floor}s"}
	run := func(b *testing.B, command string, call func() error) {
		b.Helper()
		if err := call(); err != nil { // loads the script
			b.Fatal(err)
		}
		if _, err := srv.Do("CONFIG", "RESETSTAT"); err != nil {
			b.Fatal(err)
		}
		srv0, cli0 := serverCPU(b, srv), clientCPU(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := call(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.StopTimer()
		reportCPU(b, srv, command, srv0, cli0)
	}
	b.Run("impl=Ping", func(b *testing.B) {
		run(b, "ping", func() error { return rdb.Ping(ctx).Err() })
	})
	// One goroutine pings while 4 others wait on channels, as group
	// commit's callers wait for their batch; after each PING it wakes the
	// 4, which come back (queue a new channel) during the next one. Its
	// cli-cpu-µs/op less Ping's with one goroutine, over 4, is what a
	// handoff costs between round trips, when the threads go idle.
	b.Run("impl=Ping+wake4", func(b *testing.B) {
		arrive := make(chan chan struct{}, 4)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					done := make(chan struct{})
					arrive <- done
					select {
					case <-done:
					case <-stop:
						return
					}
				}
			})
		}
		defer wg.Wait()
		defer close(stop)
		if _, err := srv.Do("CONFIG", "RESETSTAT"); err != nil {
			b.Fatal(err)
		}
		srv0, cli0 := serverCPU(b, srv), clientCPU(b)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := rdb.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			for range 4 {
				close(<-arrive)
			}
		}
		b.StopTimer()
		reportCPU(b, srv, "ping", srv0, cli0)
	})
	b.Run("impl=evalsha-return1", func(b *testing.B) {
		run(b, "evalsha", func() error { return returnOne.Run(ctx, rdb, keys).Err() })
	})
	b.Run("impl=evalsha-state", func(b *testing.B) {
		run(b, "evalsha", func() error { return stateScript.Run(ctx, rdb, keys).Err() })
	})
	b.Run("impl=evalsha-state+zadd", func(b *testing.B) {
		run(b, "evalsha", func() error { return stateZaddScript.Run(ctx, rdb, keys).Err() })
	})
}

// reportCPU reports, per b.N, Redis's time in command (server-µs/op), its
// calls (calls/op), and the CPU time Redis's main thread (srv-cpu-µs/op)
// and this process (cli-cpu-µs/op) used since srv0 and cli0.
func reportCPU(b *testing.B, srv *redistest.Server, command string, srv0, cli0 time.Duration) {
	b.Helper()
	srvCPU, cliCPU := (serverCPU(b, srv) - srv0).Seconds(), (clientCPU(b) - cli0).Seconds()
	st := commandStatsOf(b, srv, command)
	n := float64(b.N)
	b.ReportMetric(st.usec/n, "server-µs/op")
	b.ReportMetric(st.calls/n, "calls/op")
	b.ReportMetric(srvCPU*1e6/n, "srv-cpu-µs/op")
	b.ReportMetric(cliCPU*1e6/n, "cli-cpu-µs/op")
}
