package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// The fault suite: several OS processes (this test binary, re-run as
// TestFaultChild) share one bucket on a real redis-server while the server
// is frozen (SIGSTOP, then SIGCONT), its script cache is flushed, and it is
// killed (SIGKILL) and restarted. The server keeps an append-only file
// fsynced before each reply, so what a client saw acknowledged survives
// the kill (see the package doc on persistence). Each process writes what
// each of its calls did to a file; the parent then checks, for each
// failure policy:
//
//   - nothing lost: every call ended exactly once, admitted (through Redis,
//     or by the policy during the outage) or refused with a *StoreError,
//     and no process hung or leaked a goroutine (goleak in the child);
//   - half the calls are Acquire, a 0-3ms hold and Release (which may be
//     lost in the outage: the lease then ends the hold);
//   - the window on Redis's own times: whatever instant between its
//     departure and its completion (release or lease deadline, as Redis
//     recorded them) each request reached a server, no window W holds more
//     than N of them;
//   - nothing admitted twice: every admission a caller went on through
//     Redis has its own id, found in Redis's schedule (the other entries
//     are calls whose reply was lost: a token wasted, never a window
//     broken);
//   - each policy as its doc says: FailClosed refuses during the outage
//     and nobody goes without Redis; FailOpen and FallbackLocal never
//     return an error; and every process is back on Redis after the
//     restart.

// faultEnv carries a child's configuration, as JSON.
const faultEnv = "RXTHROTTLE_FAULT_CHILD"

// faultLimits: a short window that the hammering fills, and a long one
// that keeps every admission of the run in Redis's list (so it can be
// compared with what the callers saw) without ever binding.
// faultHold is the children's hold timeout: a Release lost in the outage
// ends the hold that much after its departure.
const faultHold = 300 * time.Millisecond

var faultLimits = []rxthrottle.Limit{rxthrottle.Per(5, 100*time.Millisecond), rxthrottle.Per(100000, 20*time.Second)}

type faultConfig struct {
	Addr    string
	Policy  FailurePolicy
	Run     time.Duration
	Buckets int
	Out     string
	// Restarted is the file where the parent writes when the server was
	// restarted (µs); a child runs past Run until each of its buckets
	// went through Redis after that, for at most faultOvertime: on a
	// loaded machine the restart and the breaker's probe may come late.
	Restarted string
}

// faultOvertime bounds how long a child runs past its Run waiting for
// every bucket to be back on Redis.
const faultOvertime = 30 * time.Second

// faultReport is what one child saw, per Bucket value (one per goroutine).
type faultReport struct {
	Buckets []faultBucket
	Ran     time.Duration // how long the calls went on
}

type faultBucket struct {
	Calls     int
	ViaRedis  []int64 // departure of each admission through Redis, µs on Redis's clock
	IDs       []int64 // its id (its token's member in Redis)
	Elsewhere int     // admitted by the policy without Redis
	Refused   int     // a *StoreError (FailClosed)
	Other     []string
}

func TestFaultChild(t *testing.T) {
	raw := os.Getenv(faultEnv)
	if raw == "" {
		t.Skip("run by TestFaultSuite only")
	}
	var cfg faultConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	rdb := redistest.Dial(cfg.Addr) // a cluster client in cluster mode
	defer rdb.Close()

	report := faultReport{Buckets: make([]faultBucket, cfg.Buckets)}
	began := time.Now()
	stop := began.Add(cfg.Run)
	var wg sync.WaitGroup
	for i := range report.Buckets {
		r := &report.Buckets[i]
		b, err := NewBucket(rdb, "fault", faultLimits[0], WithLimit(faultLimits[1]),
			WithFailurePolicy(cfg.Policy), WithTimeout(100*time.Millisecond), WithHoldTimeout(faultHold))
		require.NoError(t, err)
		var traced bool
		b.s.trace = func(a admission) {
			traced = true
			r.ViaRedis = append(r.ViaRedis, a.e)
			r.IDs = append(r.IDs, a.id)
		}
		// backOnRedis says the parent restarted the server and this
		// bucket went through Redis since.
		backOnRedis := func() bool {
			raw, err := os.ReadFile(cfg.Restarted)
			if err != nil {
				return false
			}
			restarted, err := strconv.ParseInt(string(raw), 10, 64)
			return err == nil && slices.ContainsFunc(r.ViaRedis, func(e int64) bool { return e > restarted })
		}
		wg.Go(func() {
			for j := 0; time.Now().Before(stop) || (time.Since(stop) < faultOvertime && !backOnRedis()); j++ {
				traced = false
				var err error
				if j%2 == 0 {
					err = b.Wait(context.Background())
				} else {
					// A held token: the request takes 0-3ms; Release
					// may fail (Redis frozen or down), and then the
					// lease ends it.
					var tok rxthrottle.Token
					tok, err = b.Acquire(context.Background())
					time.Sleep(time.Duration(j%4) * time.Millisecond)
					tok.Release()
				}
				r.Calls++
				switch {
				case err == nil && !traced:
					r.Elsewhere++
				case err == nil:
				case errors.Is(err, ErrStoreUnavailable):
					r.Refused++
				default:
					r.Other = append(r.Other, err.Error())
				}
				if err != nil || !traced {
					// Answered at once during the outage: do not
					// spin, the machine is shared.
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	report.Ran = time.Since(began)
	out, err := json.Marshal(report)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.Out, out, 0o600))
}

func TestFaultSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite takes a few seconds per policy")
	}
	for _, policy := range []FailurePolicy{FailClosed, FailOpen, FallbackLocal} {
		t.Run(policy.String(), func(t *testing.T) { runFaults(t, policy) })
	}
}

func runFaults(t *testing.T, policy FailurePolicy) {
	const (
		procs   = 3
		buckets = 2
		run     = 2200 * time.Millisecond
	)
	srv := redistest.StartPersistent(t)
	dir := t.TempDir()
	restartedFile := filepath.Join(dir, "restarted")
	var children []*exec.Cmd
	var outs []string
	for p := range procs {
		out := filepath.Join(dir, "child"+strconv.Itoa(p)+".json")
		cfg := faultConfig{Addr: srv.Addr(), Policy: policy, Run: run, Buckets: buckets, Out: out, Restarted: restartedFile}
		children = append(children, startChild(t, "TestFaultChild", time.Minute, faultEnv, cfg))
		outs = append(outs, out)
	}
	t.Cleanup(func() {
		for _, c := range children {
			if c.ProcessState == nil {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
		}
	})

	start := time.Now()
	at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }
	at(250 * time.Millisecond)
	srv.Signal(syscall.SIGSTOP)
	at(650 * time.Millisecond)
	srv.Signal(syscall.SIGCONT)
	at(850 * time.Millisecond)
	_, err := srv.Do("SCRIPT", "FLUSH")
	require.NoError(t, err)
	at(1100 * time.Millisecond)
	srv.Stop() // SIGKILL
	at(1400 * time.Millisecond)
	srv.Start()
	restarted := time.Now().UnixMicro()
	// Written whole (rename), so that a child never reads half of it.
	require.NoError(t, os.WriteFile(restartedFile+".tmp", []byte(strconv.FormatInt(restarted, 10)), 0o600))
	require.NoError(t, os.Rename(restartedFile+".tmp", restartedFile))

	var all []faultBucket
	var ran []time.Duration // per bucket, how long its child ran
	for i, c := range children {
		waitChild(t, i, c)
		raw, err := os.ReadFile(outs[i])
		require.NoError(t, err, "child %d wrote no report", i)
		var r faultReport
		require.NoError(t, json.Unmarshal(raw, &r))
		all = append(all, r.Buckets...)
		for range r.Buckets {
			ran = append(ran, r.Ran)
		}
		if r.Ran > run+100*time.Millisecond {
			t.Logf("child %d ran %v (run %v): its buckets came back on Redis late", i, r.Ran, run)
		}
	}

	// Nothing lost; each policy as documented.
	var traced []int64
	var calls, elsewhere, refused int
	for i, b := range all {
		require.Empty(t, b.Other, "bucket %d: errors other than a store failure", i)
		require.Equal(t, b.Calls, len(b.ViaRedis)+b.Elsewhere+b.Refused, "bucket %d: every call ended exactly once", i)
		require.True(t, slices.ContainsFunc(b.ViaRedis, func(e int64) bool { return e > restarted }), "bucket %d is back on Redis after the restart", i)
		if policy == FallbackLocal {
			l := faultLimits[0]
			require.LessOrEqual(t, b.Elsewhere, l.N*int(ran[i]/l.Window+1), "bucket %d: the local bucket keeps %v", i, l)
		}
		traced = append(traced, b.ViaRedis...)
		calls += b.Calls
		elsewhere += b.Elsewhere
		refused += b.Refused
	}
	t.Logf("%v: %d calls: %d through Redis, %d by the policy, %d refused", policy, calls, len(traced), elsewhere, refused)
	switch policy {
	case FailClosed:
		require.Zero(t, elsewhere, "FailClosed: nobody goes without Redis")
		require.Positive(t, refused, "the outage was seen")
	default:
		require.Zero(t, refused, "%v never returns an error", policy)
		require.Positive(t, elsewhere, "the outage was seen")
	}

	// Nothing admitted twice: each admission a caller went on has its own
	// id. The window on Redis's times: whatever instant in [departure,
	// completion] each request reached a server (completion: the release,
	// or the lease deadline, as Redis recorded it), no window of any limit
	// holds more than N of them.
	time.Sleep(faultHold) // every lease is over
	departs := map[int64]int64{}
	for _, b := range all {
		for k, id := range b.IDs {
			_, dup := departs[id]
			require.False(t, dup, "admission %d went twice", id)
			departs[id] = b.ViaRedis[k]
		}
	}
	done := members(t, srv, "rxthrottle:{fault}:done")
	for id, c := range members(t, srv, "rxthrottle:{fault}:held") {
		done[id] = c // the lease deadline is the completion
	}
	var spans []heldSpan
	for id, d := range departs {
		c, ok := done[strconv.FormatInt(id, 10)]
		require.True(t, ok, "admission %d is not in Redis's schedule", id)
		require.GreaterOrEqual(t, c, d)
		spans = append(spans, heldSpan{d, c})
	}
	requireHeldSpansFit(t, spans, faultLimits, "requests that may have reached a server")
	extra := len(done) - len(traced)
	require.LessOrEqual(t, extra, calls-len(traced), "an entry nobody went on is a call that failed or fell back")
	if extra > 0 {
		t.Logf("%d entries whose reply was lost (a token wasted each)", extra)
	}
}

// members returns the members of the ZSET key and their scores, without
// its sentinel.
func members(t *testing.T, srv *redistest.Server, key string) map[string]int64 {
	t.Helper()
	v, err := srv.Do("ZRANGE", key, 0, -1, "WITHSCORES")
	require.NoError(t, err)
	out := map[string]int64{}
	for _, pair := range v.([]any) {
		p := pair.([]any)
		if p[0] != "_" && p[0] != doneSentinel {
			out[p[0].(string)] = int64(p[1].(float64))
		}
	}
	return out
}
