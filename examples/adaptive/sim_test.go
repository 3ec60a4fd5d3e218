package adaptive

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

var svgPath = flag.String("svg", "", "write the runs' plot to this SVG file")

const (
	workers = 64 // callers, each calling again as soon as its call is answered
	base    = 10 * time.Millisecond
)

// phases: the server serves 24 calls at once at its base latency for 10 s,
// then 6 (its capacity halved twice) for 20 s.
var phases = []Phase{{10 * time.Second, 24}, {20 * time.Second, 6}}

// quota is the rate the client may send at (it binds the adaptive cap in
// the first phase).
var quota = rxthrottle.Per(2000, time.Second)

// Run is one run: the server's calls and, every 100 ms, the Bucket's cap.
type Run struct {
	Name  string
	Calls []Call
	Caps  []int
	Sent  []time.Duration // each token's departure
	Max   int             // the most calls in flight at the server
}

func (r Run) phase(i int) Measure {
	var from time.Duration
	for _, p := range phases[:i] {
		from += p.Length
	}
	return MeasureBetween(r.Calls, from, from+phases[i].Length)
}

// simulate runs the callers against a Bucket of quota with opt, on virtual
// time.
func simulate(t *testing.T, name string, opt rxthrottle.Option) Run {
	var run Run
	synctest.Test(t, func(t *testing.T) {
		var total time.Duration
		for _, p := range phases {
			total += p.Length
		}
		b, err := rxthrottle.NewBucket(quota, opt, rxthrottle.WithHoldTimeout(time.Minute))
		require.NoError(t, err)
		s := NewServer(base, phases)
		start := time.Now()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					tok, err := b.Acquire(context.Background())
					require.NoError(t, err)
					at := time.Since(start)
					if at >= total {
						tok.Cancel()
						return
					}
					mu.Lock()
					run.Sent = append(run.Sent, at)
					mu.Unlock()
					s.Serve()
					tok.Release()
				}
			})
		}
		for time.Since(start) < total {
			run.Caps = append(run.Caps, b.Stats().ConcurrencyCap)
			time.Sleep(100 * time.Millisecond)
		}
		wg.Wait()
		run.Name, run.Calls, run.Max = name, s.Calls(), s.MaxInFlight()
	})
	return run
}

// TestAdaptiveVersusFixedCaps is issue 31's simulation: in each phase,
// the adaptive cap's goodput is at least the best fixed cap's within 10%,
// and its p99 latency at most the best fixed cap's; the quota is never
// exceeded, and no cap is.
func TestAdaptiveVersusFixedCaps(t *testing.T) {
	runs := []Run{simulate(t, "adaptive 1-32", rxthrottle.WithAdaptiveConcurrency(1, 32))}
	for _, k := range []int{2, 8, 32} {
		runs = append(runs, simulate(t, fmt.Sprintf("fixed %d", k), rxthrottle.WithConcurrency(k)))
	}
	for _, r := range runs {
		for i := range phases {
			m := r.phase(i)
			t.Logf("%-14s phase %d: goodput %6.0f/s, p99 %v", r.Name, i+1, m.Goodput, m.P99)
		}
		require.LessOrEqual(t, specmodel.MaxInWindow(r.Sent, nil, quota.Window), quota.N, "%s: calls in one window", r.Name)
	}
	for i, k := range []int{2, 8, 32} {
		require.LessOrEqual(t, runs[1+i].Max, k, "%s: calls in flight", runs[1+i].Name)
	}
	require.LessOrEqual(t, runs[0].Max, 32, "adaptive: calls in flight")
	for i := range phases {
		best := runs[1].phase(i)
		for _, r := range runs[2:] {
			if m := r.phase(i); m.Goodput > best.Goodput || m.Goodput == best.Goodput && m.P99 < best.P99 {
				best = m
			}
		}
		a := runs[0].phase(i)
		require.GreaterOrEqual(t, a.Goodput, 0.9*best.Goodput, "phase %d: the adaptive cap's goodput against the best fixed cap's", i+1)
		require.LessOrEqual(t, a.P99, best.P99, "phase %d: the adaptive cap's p99 latency against the best fixed cap's", i+1)
	}
	if *svgPath != "" {
		f, err := os.Create(*svgPath)
		require.NoError(t, err)
		var series []Series
		for _, r := range runs {
			series = append(series, Series{Name: r.Name, Calls: r.Calls, Caps: r.Caps})
		}
		require.NoError(t, Plot(f, series))
		require.NoError(t, f.Close())
	}
}
