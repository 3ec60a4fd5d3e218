package bench_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/redistest"
	"github.com/rxthrottle/rxthrottle/redisstore"
)

// costEnv turns TestRedisCost on.
const costEnv = "RXTHROTTLE_REDIS_COST"

// TestRedisCost measures what each admission costs Redis and the network,
// path by path: round trips per admission (counted by a go-redis hook on
// the client: EVALSHA, an EVAL after NOSCRIPT, any other command), Redis's
// server time per admission (INFO commandstats: the time of every
// top-level command, i.e. the scripts and what the client sends outside
// them, over the admissions), script runs per admission (how well group
// commit batches), and the commands the scripts run inside, per
// admission. Unlike a benchmark's wall-clock time these figures hardly
// depend on the machine's other load, so they can be taken on a busy
// machine. It runs only when asked:
//
//	RXTHROTTLE_REDIS_COST=1 go test -run TestRedisCost -v ./bench/
//
// RXTHROTTLE_REDIS_COST=N sets the admissions per goroutine (default
// 5000).
func TestRedisCost(t *testing.T) {
	per, _ := strconv.Atoi(os.Getenv(costEnv))
	if os.Getenv(costEnv) == "" {
		t.Skip("set " + costEnv + "=1 to measure")
	}
	if per < 100 {
		per = 5000
	}
	srv := redistest.Start(t)
	var trips atomic.Int64
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 16})
	rdb.AddHook(tripCounter{&trips})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	limit := rxthrottle.Per(1<<30, time.Millisecond) // nobody waits

	bucket := func(name string) *redisstore.Bucket {
		b, err := redisstore.NewBucket(rdb, name, limit)
		if err != nil {
			t.Fatal(err)
		}
		// The first call checks the eviction policy (CONFIG GET): not
		// per admission.
		if err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		return b
	}
	rate := redis_rate.NewLimiter(rdb)
	rl := redis_rate.Limit{Rate: 1 << 30, Burst: 1 << 30, Period: time.Second}
	var paths []costPath
	for _, g := range []int{1, 8} {
		w, a, al := bucket(fmt.Sprintf("cost-wait-%d", g)), bucket(fmt.Sprintf("cost-acq-%d", g)), bucket(fmt.Sprintf("cost-allow-%d", g))
		paths = append(paths,
			costPath{"redisstore.Wait", g, func() error { return w.Wait(ctx) }},
			costPath{"redisstore.Acquire+Release", g, func() error {
				tok, err := a.Acquire(ctx)
				tok.Release()
				return err
			}},
			costPath{"redisstore.Allow", g, func() error {
				ok, err := al.Allow(ctx)
				if err == nil && !ok {
					err = fmt.Errorf("Allow = false")
				}
				return err
			}},
			costPath{"redis_rate.Allow", g, func() error {
				r, err := rate.Allow(ctx, "cost-rate", rl)
				if err == nil && r.Allowed != 1 {
					err = fmt.Errorf("Allow = %+v", r)
				}
				return err
			}},
		)
	}
	t.Logf("load average: %s", loadAverage())
	t.Logf("%-28s %2s %9s %11s %12s %12s %9s  %s", "path", "G", "admits/s", "trips/admit", "scripts/adm", "server-µs/a", "µs/script", "inside the scripts, calls per admission")
	for _, p := range paths {
		if _, err := srv.Do("CONFIG", "RESETSTAT"); err != nil {
			t.Fatal(err)
		}
		trips.Store(0)
		start := time.Now()
		var wg sync.WaitGroup
		for range p.g {
			wg.Go(func() {
				for range per {
					if err := p.admit(); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		el := time.Since(start)
		n := float64(per * p.g)
		st := allCommandStats(t, srv)
		scripts := st["evalsha"].calls + st["eval"].calls
		var top float64
		var inside []string
		for name, c := range st {
			switch name {
			case "evalsha", "eval", "ping", "config", "info":
				top += c.usec
			default:
				inside = append(inside, fmt.Sprintf("%s %.2f", name, c.calls/n))
			}
		}
		sort.Strings(inside)
		t.Logf("%-28s %2d %9.0f %11.2f %12.3f %12.2f %9.2f  %s", p.name, p.g, n/el.Seconds(),
			float64(trips.Load())/n, scripts/n, top/n, (st["evalsha"].usec+st["eval"].usec)/max(scripts, 1), strings.Join(inside, ", "))
	}
}

// costPath is one path of TestRedisCost: admit, from g goroutines.
type costPath struct {
	name  string
	g     int
	admit func() error
}

// tripCounter is a go-redis hook that counts the round trips: each command
// sent alone, and each pipeline.
type tripCounter struct{ n *atomic.Int64 }

func (h tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct{ calls, usec float64 }

// allCommandStats returns every command's calls and total time since the
// last CONFIG RESETSTAT (the commands scripts run are counted too).
func allCommandStats(t *testing.T, srv *redistest.Server) map[string]cmdStat {
	v, err := srv.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]cmdStat{}
	for _, line := range strings.Split(v.(string), "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, fields, _ := strings.Cut(rest, ":")
		var c cmdStat
		for _, field := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(field, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				c.calls = f
			case "usec":
				c.usec = f
			}
		}
		m[name] = c
	}
	return m
}

// loadAverage returns the machine's load averages (1, 5, 15 minutes).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}
