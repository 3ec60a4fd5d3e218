package redisstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// The lease suite across processes: OS processes (this test binary, re-run
// as TestLeaseChild) call Wait on one leased Bucket from several
// goroutines each, and log every admission (lease_log_test.go); the parent
// checks on Redis's clock that no window holds more than N, for every
// limit, counting each leased token from its grant to its reported
// completion (or its lease deadline, for a process killed before it
// reported; or the earliest completion Redis could have recorded, for one
// killed during the round trip of its report: see spansOf).

const leaseEnv = "RXTHROTTLE_LEASE_CHILD"

type leaseChild struct {
	Addr, Name, Out string
	Limits          []rxthrottle.Limit
	G, Lease        int
	Hold, Run       time.Duration
	Unbuffered      bool // the process is killed: every line goes to the file at once
}

func TestLeaseChild(t *testing.T) {
	raw := os.Getenv(leaseEnv)
	if raw == "" {
		t.Skip("run by TestLeaseAcrossProcesses only")
	}
	var cfg leaseChild
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	rdb := redistest.Dial(cfg.Addr)
	defer rdb.Close()
	opts := []Option{WithHoldTimeout(cfg.Hold), WithLease(cfg.Lease), WithTimeout(suiteTimeout)}
	for _, l := range cfg.Limits[1:] {
		opts = append(opts, rxthrottle.WithLimit(l))
	}
	b, err := NewBucket(rdb, cfg.Name, cfg.Limits[0], opts...)
	require.NoError(t, err)
	f, err := os.Create(cfg.Out)
	require.NoError(t, err)
	defer f.Close()
	var w io.Writer = f
	var bw *bufio.Writer
	if !cfg.Unbuffered {
		bw = bufio.NewWriterSize(f, 1<<20)
		w = bw
	}
	log := &admissionLog{w: w}
	log.attach(b)
	stop := time.Now().Add(cfg.Run)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range cfg.G {
		wg.Go(func() {
			for time.Now().Before(stop) {
				require.NoError(t, b.Wait(ctx))
			}
		})
	}
	wg.Wait()
	require.NoError(t, b.Close())
	if bw != nil {
		log.mu.Lock()
		require.NoError(t, bw.Flush())
		log.mu.Unlock()
	}
	t.Logf("leased %d of %d", b.Leased(), b.Stats().Admitted)
}

// runLeaseChildren starts n children with cfg (Out set per child) and
// returns them with their log paths.
func runLeaseChildren(t *testing.T, cfg leaseChild, n int, dir, tag string) ([]*exec.Cmd, []string) {
	t.Helper()
	var cmds []*exec.Cmd
	var outs []string
	for i := range n {
		cfg.Out = filepath.Join(dir, tag+strconv.Itoa(i)+".log")
		cmds, outs = append(cmds, startChild(t, "TestLeaseChild", 2*time.Minute, leaseEnv, cfg)), append(outs, cfg.Out)
	}
	return cmds, outs
}

// waitLeaseChildren waits for cmds to end, and fails the test with a
// child's output if it failed.
func waitLeaseChildren(t *testing.T, cmds []*exec.Cmd) {
	t.Helper()
	for i, c := range cmds {
		waitChild(t, i, c)
	}
}

// TestLeaseAcrossProcesses: processes with leases on one Bucket, the
// window checked on Redis's clock: a small quota that binds (3 processes
// of 4 goroutines, and a fourth killed mid-run), and the benchmark's load
// (4 processes of 8 goroutines) on a quota that binds too.
func TestLeaseAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("processes for seconds")
	}
	srv := redistest.Start(t)
	dir := t.TempDir()
	t.Run("small", func(t *testing.T) {
		cfg := leaseChild{Addr: srv.Addr(), Name: "lease-small", G: 4, Hold: time.Second, Run: 2 * time.Second,
			Limits: []rxthrottle.Limit{rxthrottle.Per(50, 200*time.Millisecond), rxthrottle.Per(120, time.Second)}}
		cmds, outs := runLeaseChildren(t, cfg, 3, dir, "small")
		kcfg := cfg
		kcfg.Run, kcfg.Unbuffered = time.Minute, true
		killed, kouts := runLeaseChildren(t, kcfg, 1, dir, "killed")
		// Killed mid-run: once it has admitted (its log has a line; a
		// loaded machine can take longer than the others' run to start
		// it), and a little later, while it uses a lease.
		redistest.WaitFor(t, "the child to be killed admits", func() error {
			if st, err := os.Stat(kouts[0]); err != nil || st.Size() == 0 {
				return fmt.Errorf("no admission logged yet (%v)", err)
			}
			return nil
		})
		time.Sleep(200 * time.Millisecond)
		require.NoError(t, killed[0].Process.Kill())
		_ = killed[0].Wait()
		waitLeaseChildren(t, cmds)
		spans := readSpans(t, micros(cfg.Hold), append(outs, kouts...)...)
		requireSpansFit(t, spans, cfg.Limits, "small quota, one process killed")
	})
	t.Run("load", func(t *testing.T) {
		cfg := leaseChild{Addr: srv.Addr(), Name: "lease-load", G: 8, Hold: time.Second, Run: 2 * time.Second,
			Limits: []rxthrottle.Limit{rxthrottle.Per(3000, 100*time.Millisecond)}}
		cmds, outs := runLeaseChildren(t, cfg, 4, dir, "load")
		waitLeaseChildren(t, cmds)
		requireSpansFit(t, readSpans(t, micros(cfg.Hold), outs...), cfg.Limits, "4 processes x 8")
	})
}
