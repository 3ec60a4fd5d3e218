package redisstore

import (
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// TestOutageReport measures what a Redis outage costs a caller, for
// BENCHMARKS.md; it runs only with RXTHROTTLE_OUTAGE_REPORT=1:
//
//	RXTHROTTLE_OUTAGE_REPORT=1 go test -run TestOutageReport -v ./redisstore/
//
// For each policy, on a go-redis client with its default options (five
// dial attempts per call, the slow case the breaker is for) and no
// WithTimeout: Redis is killed, one Wait fails (its latency is reported
// apart), then 4 goroutines call Wait for 3 seconds and the latencies of
// their calls (probes included) give p50, p99 and the max. Then Redis is
// restarted, and the report gives the time from its first PONG to the
// first admission through Redis, with the callers still calling.
func TestOutageReport(t *testing.T) {
	if os.Getenv("RXTHROTTLE_OUTAGE_REPORT") != "1" {
		t.Skip("set RXTHROTTLE_OUTAGE_REPORT=1 to measure (about 20s)")
	}
	for _, policy := range []FailurePolicy{FailClosed, FailOpen, FallbackLocal} {
		srv := redistest.Start(t)
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		b, err := NewBucket(rdb, "outage", rxthrottle.Per(1_000_000, time.Second), WithFailurePolicy(policy))
		if err != nil {
			t.Fatal(err)
		}
		var viaRedis atomic.Int64
		b.s.trace = func(admission) { viaRedis.Add(1) }
		ctx := context.Background()
		if err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		srv.Stop()
		start := time.Now()
		_ = b.Wait(ctx)
		first := time.Since(start)

		var (
			mu    sync.Mutex
			lat   []time.Duration
			stop  atomic.Bool
			wg    sync.WaitGroup
			since atomic.Int64 // when Redis answered again, Unix ns
			back  atomic.Int64 // first admission through Redis after that
		)
		for range 4 {
			wg.Go(func() {
				var mine []time.Duration
				for !stop.Load() {
					n := viaRedis.Load()
					s := time.Now()
					_ = b.Wait(ctx)
					mine = append(mine, time.Since(s))
					if viaRedis.Load() > n && since.Load() != 0 {
						back.CompareAndSwap(0, time.Now().UnixNano())
					}
					time.Sleep(100 * time.Microsecond)
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
		}
		time.Sleep(3 * time.Second)
		srv.Start()
		since.Store(time.Now().UnixNano())
		deadline := time.Now().Add(10 * time.Second)
		for back.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		stop.Store(true)
		wg.Wait()
		_ = rdb.Close()
		slices.Sort(lat)
		q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
		recovery := "not back within 10s"
		if back.Load() != 0 {
			recovery = time.Duration(back.Load() - since.Load()).String()
		}
		t.Logf("%-13v first failed Wait %v; then %d Waits: p50 %v, p99 %v, max %v; back on Redis %s after it answered",
			policy, first.Round(time.Millisecond), len(lat), q(0.50), q(0.99), lat[len(lat)-1].Round(time.Millisecond), recovery)
	}
}
