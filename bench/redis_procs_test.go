package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// procsEnv selects the runs of TestRedisProcs: "PxG,PxG,..." (P OS
// processes of G goroutines each), e.g. "1x1,1x8,4x8".
const procsEnv = "RXTHROTTLE_REDIS_PROCS"

// procsChildEnv carries a child's configuration (JSON).
const procsChildEnv = "RXTHROTTLE_REDIS_PROCS_CHILD"

type procsConfig struct {
	Addr, Impl, Out string
	G               int
	Run             time.Duration
}

// TestRedisProcs measures admissions per second through one local
// redis-server from P OS processes (this test binary, re-run as
// TestRedisProcsChild) of G goroutines each, all on one key, for
// redisstore.Bucket.Wait (one Bucket per process, shared by its
// goroutines: group commit batches their admissions), the same with
// leases ("redisstore.Wait(lease)": WithLease(0), a Bucket of its own name
// closed at the end; "redisstore.Wait(lease,1s)" with a window of 1s, not
// 1ms: the flush timer's period and the runs' gap follow the window),
// redis_rate's Allow
// (one round trip per call; with the limit of BenchmarkAdmission, which
// never makes its script write, and with one that does, "(writes)") and
// EVALSHA of "return 1" (the ceiling of one script run per call). For
// each it prints admissions/s, the ratio to redis_rate.Allow and to the
// ceiling, and per admission: Redis's time in the scripts ("server", INFO
// commandstats), the script runs ("scripts": under 1 when group commit
// batches), the CPU time of Redis's main thread, network I/O included
// ("srv-cpu", µs), and that of the P processes ("cli-cpu", µs). The CPU
// times hardly depend on other load on the machine; admissions/s does. It
// runs only when asked:
//
//	RXTHROTTLE_REDIS_PROCS=1x1,1x8,4x8 go test -run TestRedisProcs -v ./bench/
//
// RXTHROTTLE_REDIS_PROCS_TIME sets each run's length (default 2s). The
// children inherit the environment, GOMAXPROCS included: with
// GOMAXPROCS=1 each client process runs its goroutines on one thread,
// which on a machine whose few cores Redis shares costs far less CPU per
// goroutine handoff (BenchmarkRedisFloor's Ping+wake4).
func TestRedisProcs(t *testing.T) {
	spec := os.Getenv(procsEnv)
	if spec == "" {
		t.Skip("set " + procsEnv + "=1x1,1x8,4x8 to measure")
	}
	run := 2 * time.Second
	if s := os.Getenv(procsEnv + "_TIME"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		run = d
	}
	srv := redistest.Start(t)
	dir := t.TempDir()
	t.Logf("load average before: %s", loadAverage())
	t.Logf("%-5s %-25s %12s %9s %9s %8s %8s %8s %8s", "PxG", "impl", "admissions/s", "/rate", "/ceiling", "server", "scripts", "srv-cpu", "cli-cpu")
	impls := []string{"redisstore.Wait", "redisstore.Wait(lease)", "redisstore.Wait(lease,1s)", "redis_rate.Allow", "redis_rate.Allow(writes)", "evalsha-return-1"}
	for _, pg := range strings.Split(spec, ",") {
		var p, g int
		if _, err := fmt.Sscanf(pg, "%dx%d", &p, &g); err != nil || p < 1 || g < 1 {
			t.Fatalf("%s=%q: want PxG,PxG...", procsEnv, spec)
		}
		rates, rows := map[string]float64{}, map[string]string{}
		for _, impl := range impls {
			if _, err := srv.Do("CONFIG", "RESETSTAT"); err != nil {
				t.Fatal(err)
			}
			srv0 := serverCPU(t, srv)
			var cmds []*exec.Cmd
			var outs []string
			for i := range p {
				out := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", pg, impl, i))
				cfg, _ := json.Marshal(procsConfig{Addr: srv.Addr(), Impl: impl, Out: out, G: g, Run: run})
				cmd := exec.Command(os.Args[0], "-test.run=^TestRedisProcsChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), procsChildEnv+"="+string(cfg))
				cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // a child's failure says why
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds, outs = append(cmds, cmd), append(outs, out)
			}
			var total int64
			var cli time.Duration
			for i, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Fatalf("child %d: %v", i, err)
				}
				cli += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				raw, err := os.ReadFile(outs[i])
				if err != nil {
					t.Fatal(err)
				}
				n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				total += n
			}
			srvCPU := serverCPU(t, srv) - srv0
			st := allCommandStats(t, srv)["evalsha"]
			usec, calls := st.usec, st.calls
			n := float64(total)
			rates[impl] = n / run.Seconds()
			rows[impl] = fmt.Sprintf("%8.2f %8.3f %8.2f %8.2f", usec/n, calls/n, srvCPU.Seconds()*1e6/n, cli.Seconds()*1e6/n)
		}
		for _, impl := range impls {
			t.Logf("%-5s %-25s %12.0f %8.2fx %8.2fx %s", pg, impl, rates[impl],
				rates[impl]/rates["redis_rate.Allow"], rates[impl]/rates["evalsha-return-1"], rows[impl])
		}
		for _, impl := range []string{"redisstore.Wait", "redisstore.Wait(lease)", "redisstore.Wait(lease,1s)"} {
			t.Logf("%-5s %s: %.2fx redis_rate.Allow, %.2fx redis_rate.Allow(writes), %.2fx the EVALSHA \"return 1\" ceiling", pg, impl,
				rates[impl]/rates["redis_rate.Allow"], rates[impl]/rates["redis_rate.Allow(writes)"], rates[impl]/rates["evalsha-return-1"])
		}
	}
	t.Logf("load average after: %s", loadAverage())
}

var returnOne = redis.NewScript("return 1")

// TestRedisProcsChild is one process of TestRedisProcs.
func TestRedisProcsChild(t *testing.T) {
	raw := os.Getenv(procsChildEnv)
	if raw == "" {
		t.Skip("run by TestRedisProcs only")
	}
	var cfg procsConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Addr, PoolSize: max(10, cfg.G)})
	defer rdb.Close()
	ctx := context.Background()
	var admit func() error
	switch cfg.Impl {
	case "redisstore.Wait":
		// A call timeout far from any round trip here, so that a machine
		// that stalls a child fails no call (and no run): it measures
		// nothing.
		b, err := redisstore.NewBucket(rdb, "procs", rxthrottle.Per(1<<30, time.Millisecond), redisstore.WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		admit = func() error { return b.Wait(ctx) }
	case "redisstore.Wait(lease)", "redisstore.Wait(lease,1s)":
		limit := rxthrottle.Per(1<<30, time.Millisecond)
		if cfg.Impl == "redisstore.Wait(lease,1s)" {
			limit = rxthrottle.Per(1<<30, time.Second)
		}
		// The call timeout, as above.
		b, err := redisstore.NewBucket(rdb, "procs-"+cfg.Impl, limit, redisstore.WithLease(0), redisstore.WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := b.Close(); err != nil {
				t.Error(err)
			}
		}()
		admit = func() error { return b.Wait(ctx) }
	case "redis_rate.Allow", "redis_rate.Allow(writes)":
		lim := redis_rate.NewLimiter(rdb)
		l := redis_rate.Limit{Rate: 1 << 30, Burst: 1 << 30, Period: time.Second}
		if cfg.Impl == "redis_rate.Allow(writes)" {
			l.Rate = 100000 // see TestRedisCost: at 2^30 per second it never writes
		}
		admit = func() error {
			r, err := lim.Allow(ctx, "procs", l)
			if err == nil && r.Allowed != 1 {
				err = fmt.Errorf("Allow = %+v", r)
			}
			return err
		}
	default:
		admit = func() error { return returnOne.Run(ctx, rdb, []string{"procs"}).Err() }
	}
	var n atomic.Int64
	stop := time.Now().Add(cfg.Run)
	var wg sync.WaitGroup
	for range cfg.G {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if err := admit(); err != nil {
					t.Error(err)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if err := os.WriteFile(cfg.Out, []byte(strconv.FormatInt(n.Load(), 10)), 0o600); err != nil {
		t.Fatal(err)
	}
}
