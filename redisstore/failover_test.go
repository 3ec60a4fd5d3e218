package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// The failover suite: several OS processes (this test binary, re-run as
// TestFailoverChild) share one bucket on a Redis Cluster of three masters
// with a replica each, and in the middle of the run the bucket's master
// is failed over: by hand (CLUSTER FAILOVER on its replica), then by
// killing the new master (SIGKILL; its replica takes over after the node
// timeout), either with its replica in sync or with its replica lagging
// (frozen, behind 48 MB of other writes to that master, for the last
// 200ms before the kill: what a partition or a slow replica does). Every
// caller calls Wait, so each admission's departure is its emission, on
// Redis's clock. The parent then measures what the window did across the
// failovers, and checks what must always hold:
//
//   - nothing lost on our side: every call ended exactly once, admitted
//     through Redis or refused with a *StoreError (FailClosed), and every
//     process is back on Redis after the kill;
//   - a manual failover loses nothing: the replica has every admission
//     acknowledged before it took over;
//   - a killed master may lose its newest admissions (Redis replicates
//     asynchronously): the promoted replica never heard of them, reuses
//     their ids, and admits again in their place. So a window may hold
//     more than N, but never by more than the admissions lost;
//   - with WithReplicaAck, no admission a caller went on is lost, and
//     the window holds.
//
// A lost admission is one a caller went on whose id and departure are not
// in the final schedule (the promoted replica's).

// failoverEnv carries a child's configuration, as JSON.
const failoverEnv = "RXTHROTTLE_FAILOVER_CHILD"

// failoverLimits: the quota the callers fill, N = 30 per W = 3s, a window
// longer than a failover takes (about 1.5s with a node timeout of 1s), so
// that the promoted replica admits again within a window of what it lost;
// one per 20ms, so that admissions flow during the failover rather than
// all at a window's start; and a long limit that keeps every admission of
// the run in Redis (to compare with what the callers saw) without ever
// binding.
var failoverLimits = []rxthrottle.Limit{rxthrottle.Per(30, 3*time.Second), rxthrottle.Per(1, 20*time.Millisecond), rxthrottle.Per(100000, time.Minute)}

type failoverConfig struct {
	Addrs    []string // the cluster's nodes, or
	Sentinel string   // the Sentinel that names the master
	Ack      bool     // WithReplicaAck(1, failoverAckTimeout)
	Buckets  int
	Stop     string // the children stop when this file exists
	Out      string
}

// failoverAckTimeout is the children's WAIT timeout with WithReplicaAck.
const failoverAckTimeout = 50 * time.Millisecond

type failoverReport struct {
	Buckets []failoverBucket
}

type failoverBucket struct {
	Calls    int
	ViaRedis []int64 // departure of each admission through Redis, µs on Redis's clock
	Nows     []int64 // Redis's now when it made it
	IDs      []int64
	Refused  int // a *StoreError
	Other    []string
}

func TestFailoverChild(t *testing.T) {
	raw := os.Getenv(failoverEnv)
	if raw == "" {
		t.Skip("run by TestFailover only")
	}
	var cfg failoverConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	var rdb redis.UniversalClient
	if cfg.Sentinel != "" {
		rdb = redistest.NewFailoverClient(cfg.Sentinel)
	} else {
		rdb = redistest.NewFailoverClusterClient(cfg.Addrs...)
	}

	report := failoverReport{Buckets: make([]failoverBucket, cfg.Buckets)}
	stop := time.Now().Add(time.Minute) // at the latest
	var wg sync.WaitGroup
	for i := range report.Buckets {
		r := &report.Buckets[i]
		opts := []Option{WithLimit(failoverLimits[1]), WithLimit(failoverLimits[2]), WithTimeout(200 * time.Millisecond)}
		if cfg.Ack {
			opts = append(opts, WithReplicaAck(1, failoverAckTimeout))
		}
		b, err := NewBucket(rdb, "failover", failoverLimits[0], opts...)
		require.NoError(t, err)
		var traced bool
		b.s.trace = func(a admission) {
			traced = true
			r.ViaRedis = append(r.ViaRedis, a.e)
			r.Nows = append(r.Nows, a.now)
			r.IDs = append(r.IDs, a.id)
		}
		wg.Go(func() {
			// Once the stop file exists (written after the failover),
			// each bucket stops at its next admission through Redis:
			// a loaded machine can keep a breaker backing off past the
			// parent's wait, and "back on Redis after the kill" is what
			// the parent checks.
			stopping := false
			for time.Now().Before(stop) {
				stopping = stopping || exists(cfg.Stop)
				traced = false
				err := b.Wait(context.Background())
				r.Calls++
				switch {
				case err == nil && traced:
					if stopping {
						return
					}
				case errors.Is(err, ErrStoreUnavailable):
					r.Refused++
					time.Sleep(time.Millisecond) // answered at once: do not spin
				case err == nil:
					r.Other = append(r.Other, "admitted without Redis under FailClosed")
				default:
					r.Other = append(r.Other, err.Error())
				}
			}
		})
	}
	wg.Wait()
	// go-redis redials a dead node once a second, and its redial loop
	// ends at its next wake-up after Close: CloseClient waits for it, for
	// goleak.
	redistest.CloseClient(t, rdb)
	out, err := json.Marshal(report)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.Out, out, 0o600))
}

func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("the failover suite takes about 40 seconds: six runs, two at once")
	}
	if redistest.ClusterMode() {
		t.Skip("it starts clusters of its own: the plain run runs it")
	}
	for _, sentinel := range []bool{false, true} {
		for _, sc := range []struct {
			name     string
			ack, lag bool
		}{
			{"async", false, false},
			{"async/lagging-replica", false, true},
			{"WithReplicaAck/lagging-replica", true, true},
		} {
			name := "cluster/" + sc.name
			if sentinel {
				name = "sentinel/" + sc.name
			}
			t.Run(name, func(t *testing.T) {
				// Each run has servers and child processes of its own,
				// and mostly waits (on the windows, the node timeout,
				// the breakers' back-off): two at once (-parallel's
				// default on CI's two cores) halve the suite's 75 s.
				t.Parallel()
				m := runFailover(t, sentinel, sc.ack, sc.lag)
				t.Logf("%s: %+v", name, m)
			})
		}
	}
}

// failoverMeasure is what one run of the failover suite measured.
type failoverMeasure struct {
	Admitted, Refused int
	// Lost: admissions a caller went on that the final schedule does not
	// have (all of them lost at the kill).
	Lost int
	// LostSpan: from the first lost admission to the last.
	LostSpan time.Duration
	// MaxInWindow: the most departures in any window of the quota (its N
	// is 30), over the whole run.
	MaxInWindow int
	// Gap: from the kill to the first admission Redis made after it.
	Gap time.Duration
}

// failoverTopology is where the failover suite runs: a Redis Cluster, or
// one master and its replica watched by a Sentinel.
type failoverTopology struct {
	cluster  *redistest.Cluster
	sentinel *redistest.Sentinel
	// In a Sentinel's topology: the master and its replica, as started.
	master, replica *redistest.Server
}

// runFailover runs the suite once, on a cluster or under a Sentinel, with
// WithReplicaAck if ack, with the killed master's replica lagging if lag.
// On a cluster the key's master is first failed over by hand, then the
// new master is killed; under a Sentinel the master is killed.
func runFailover(t *testing.T, sentinel, ack, lag bool) failoverMeasure {
	const (
		procs   = 3
		buckets = 2
	)
	key := "rxthrottle:{failover}:done"
	var top failoverTopology
	base := failoverConfig{Ack: ack, Buckets: buckets}
	if sentinel {
		// A directory of its own: once a replica (after the failover),
		// it writes the master's RDB there, not in the package's
		// directory, where every later server would load it.
		top.master = redistest.StartWith(t, "--dir", t.TempDir())
		top.replica = redistest.StartReplica(t, top.master)
		top.sentinel = redistest.StartSentinel(t, top.master, 500*time.Millisecond)
		base.Sentinel = top.sentinel.Addr()
	} else {
		top.cluster = redistest.StartReplicatedCluster(t, redistest.ClusterOptions{NodeTimeout: time.Second})
		base.Addrs = top.cluster.Addrs()
	}
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	var children []*exec.Cmd
	var outs []string
	logs := make([]bytes.Buffer, procs)
	for p := range procs {
		out := filepath.Join(dir, "child"+strconv.Itoa(p)+".json")
		cfg := base
		cfg.Stop, cfg.Out = stop, out
		raw, err := json.Marshal(cfg)
		require.NoError(t, err)
		cmd := exec.Command(os.Args[0], "-test.run=^TestFailoverChild$", "-test.count=1", "-test.timeout=90s")
		cmd.Env = append(os.Environ(), failoverEnv+"="+string(raw))
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Stdout, cmd.Stderr = &logs[p], &logs[p]
		require.NoError(t, cmd.Start())
		children = append(children, cmd)
		outs = append(outs, out)
	}
	t.Cleanup(func() {
		for _, ch := range children {
			if ch.ProcessState == nil {
				_ = ch.Process.Kill()
				_ = ch.Wait()
			}
		}
	})

	time.Sleep(500 * time.Millisecond)
	// second is the master to kill, first its replica.
	first, second := top.replica, top.master
	manual := int64(0)
	if !sentinel {
		first = top.cluster.MasterOf(key)
		second = top.cluster.Failover(key) // by hand: nothing acknowledged is lost
		manual = redisNow(t, second)
	}
	// Kill in the second window, while admissions flow (the first
	// window's 30 went within its first 600ms, and renew as they went).
	redistest.WaitFor(t, "the second window's admissions", func() error {
		v, err := second.Do("ZCARD", key) // the sentinel, and one per admission
		if n, _ := v.(int64); err != nil || n < int64(failoverLimits[0].N)+2 {
			return fmt.Errorf("%v admissions, %v", v, err)
		}
		return nil
	})
	if lag {
		// The replica stops reading (frozen), the master's writes to
		// it fill the socket's buffers, and what the master writes
		// next waits in its own output buffer, lost with it.
		first.Signal(syscall.SIGSTOP)
		filler := strings.Repeat("x", 1<<20)
		_, err := second.Client(t).Pipelined(context.Background(), func(p redis.Pipeliner) error {
			for i := range 48 {
				p.Set(context.Background(), "{failover}filler"+strconv.Itoa(i), filler, 0)
			}
			return nil
		})
		require.NoError(t, err)
		// Ten admissions more, or as many as come in 500ms.
		deadline := time.Now().Add(500 * time.Millisecond)
		for time.Now().Before(deadline) {
			if v, err := second.Do("ZCARD", key); err != nil || v.(int64) >= int64(failoverLimits[0].N)+12 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	killed := redisNow(t, second)
	second.Stop() // SIGKILL: its replica takes over
	if lag {
		first.Signal(syscall.SIGCONT)
	}
	// Until the new master has a replica, WithReplicaAck admits nothing
	// (no replica to ack). In the cluster the killed node comes back,
	// empty, as the new master's replica; under the Sentinel a new one
	// replicates the new master.
	if sentinel {
		top.sentinel.WaitMaster(first)
		redistest.StartReplica(t, first)
	} else {
		top.cluster.WaitServed(key, first)
		second.Start()
		top.cluster.WaitHealthy()
	}
	time.Sleep(DefaultRetryMax + time.Second) // the breakers' longest back-off, and calls after it
	require.NoError(t, os.WriteFile(stop, nil, 0o600))

	var all []failoverBucket
	for i, ch := range children {
		err := ch.Wait()
		require.NoError(t, err, "child %d: %s", i, logs[i].String())
		raw, err := os.ReadFile(outs[i])
		require.NoError(t, err, "child %d wrote no report", i)
		var r failoverReport
		require.NoError(t, json.Unmarshal(raw, &r))
		all = append(all, r.Buckets...)
	}

	var m failoverMeasure
	var departs []int64
	after := int64(-1)
	// "id e" of what the callers went on, and how many went on it: a
	// promoted replica that lost admission id gives the same id again,
	// and the same departure if the window decides it (e_(i-N) + W of
	// the admissions it has): two callers then went on one entry.
	seen := map[string]int{}
	for i, b := range all {
		require.Empty(t, b.Other, "bucket %d", i)
		require.Equal(t, b.Calls, len(b.ViaRedis)+b.Refused, "bucket %d: every call ended exactly once", i)
		require.True(t, slices.ContainsFunc(b.ViaRedis, func(e int64) bool { return e > killed }), "bucket %d is back on Redis after the kill", i)
		for k, e := range b.ViaRedis {
			departs = append(departs, e)
			seen[strconv.FormatInt(b.IDs[k], 10)+" "+strconv.FormatInt(e, 10)]++
			if now := b.Nows[k]; now > killed && (after < 0 || now < after) {
				after = now
			}
		}
		m.Refused += b.Refused
	}
	m.Admitted = len(departs)
	m.Gap = durationOf(after - killed)
	slices.Sort(departs)
	m.MaxInWindow = maxInWindow(departs, micros(failoverLimits[0].Window))

	final := members(t, first, key)
	var lost []int64
	for idE, n := range seen {
		id, es, _ := strings.Cut(idE, " ")
		e, _ := strconv.ParseInt(es, 10, 64)
		if got, ok := final[id]; ok && got == e {
			n-- // the final schedule's own
		}
		for range n {
			lost = append(lost, e)
			require.Greater(t, e, manual, "admission %s, before the manual failover (if any), is lost", idE)
		}
	}
	m.Lost = len(lost)
	if len(lost) > 0 {
		m.LostSpan = durationOf(slices.Max(lost) - slices.Min(lost))
	}
	n := failoverLimits[0].N
	require.LessOrEqual(t, m.MaxInWindow, n+m.Lost, "the window is broken by lost admissions only")
	if ack {
		require.Zero(t, m.Lost, "WithReplicaAck: every admission a caller went on was on the replica")
		require.LessOrEqual(t, m.MaxInWindow, n)
	}
	return m
}

// exists reports whether the file at path exists ("" never does).
func exists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}
