package redisstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// scriptGate holds every script call while shut, so that a test can make
// callers arrive while a call is in flight.
type scriptGate struct {
	shut    atomic.Bool
	entered chan struct{}
	open    chan struct{}
}

func (g *scriptGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *scriptGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (g *scriptGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.HasPrefix(cmd.Name(), "eval") && g.shut.CompareAndSwap(true, false) {
			g.entered <- struct{}{}
			<-g.open
		}
		return next(ctx, cmd)
	}
}

// TestBumpDuringFlight: a caller of higher priority that arrives while a
// script run is in flight takes the departures of the callers of lower
// priority, the one that run gives included (SPEC.md, "Priorities"):
// when the answer comes, that departure is withdrawn too and its caller
// asks again behind it. The next run is led by the first caller queued,
// behind the withdrawals queued ahead of every caller. Before fair.go
// the departure the run in flight gave was kept: low2 went first.
func TestBumpDuringFlight(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	gate := &scriptGate{entered: make(chan struct{}), open: make(chan struct{})}
	rdb.AddHook(gate)
	b, err := NewBucket(rdb, "flight", rxthrottle.Per(1, 300*time.Millisecond), WithTimeout(10*time.Second), rxthrottle.WithLimit(keepAll))
	require.NoError(t, err)
	var (
		tmu    sync.Mutex
		traced []admission // every answer a caller departs by, in order
	)
	b.s.trace = func(a admission) {
		tmu.Lock()
		traced = append(traced, a)
		tmu.Unlock()
	}
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	wait := func(name string, prio int) {
		wg.Go(func() {
			require.NoError(t, b.Wait(rxthrottle.WithPriority(ctx, prio)))
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		})
	}
	wait("low1", -1)
	require.Eventually(t, func() bool { return departing(b) == 1 }, 10*time.Second, time.Millisecond)
	gate.shut.Store(true)
	wait("low2", -1) // leads a run, held in flight
	<-gate.entered
	wait("high", 1) // queued behind the run in flight
	require.Eventually(t, func() bool {
		b.s.group.mu.Lock()
		defer b.s.group.mu.Unlock()
		f := flightLocked(&b.s.group, b.keys[0])
		return f != nil && b.s.group.windows[b.keys[0]].queuedLocked() >= 3 // low1's withdrawal, high, low1 asking again
	}, 10*time.Second, time.Millisecond)
	close(gate.open)
	wg.Wait()
	require.Equal(t, []string{"high", "low1", "low2"}, order)
	require.Zero(t, departing(b))
	requireNoWindow(t, b)
	es := emissions(t, srv, b)
	require.Len(t, es, 4, "one token each, the withdrawn reservations gone")
	// high departs as if low1's and low2's reservations had never been
	// made: a window after the first Wait, or at its run if later (on
	// Redis's clock). Before its withdrawals went first, it was scheduled
	// behind them, two windows later.
	tmu.Lock()
	defer tmu.Unlock()
	i := slices.IndexFunc(traced, func(a admission) bool { return a.e == es[1] })
	require.GreaterOrEqual(t, i, 0, "high's answer")
	w := (300 * time.Millisecond).Microseconds()
	require.Equal(t, max(traced[i].now, traced[0].e+w), traced[i].e, "high's departure (µs), the first Wait's at %d", traced[0].e)
}
