package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// TestReplanAnswerLandingAfterAnotherProcessSetLimit: process A's caller
// X is given a departure under Per(3, hour); before its answer lands,
// process B lowers the limits to Per(1, hour), and A reads them (its
// configuration watch runs, since another caller of A, Z, sleeps on a
// departure). X's answer, planned under the old limits, is re-planned as
// it lands (group_run.go): every departure after the first three is a
// window after the one before it, as if Per(1, hour) had always been in
// force. Without that re-plan X kept the departure the old limits gave
// it, less than an hour after the third, and the window never settled.
func TestReplanAnswerLandingAfterAnotherProcessSetLimit(t *testing.T) {
	clk := newSignalClock()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	gate := newBatchGate()
	gate.late = true // the script runs in Redis, its answer is held
	rdb.AddHook(gate)
	a, err := NewBucket(rdb, "test", rxthrottle.Per(3, time.Hour), WithTimeout(suiteTimeout), WithClock(clk))
	require.NoError(t, err)
	a.s.sleeping = func(time.Duration) {}
	b, err := NewBucket(srv.Client(t), "test", rxthrottle.Per(3, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	for range 3 {
		require.NoError(t, a.Wait(ctx)) // each a little later on Redis's clock
	}
	sleeper := make(chan error, 1)
	go func() { sleeper <- a.Wait(ctx) }() // Z: a departure an hour on; the watch runs
	settled(t, a.s, a.keys[0], 1)

	gate.shut.Store(true)
	late := make(chan error, 1)
	go func() { late <- a.Wait(ctx) }()
	<-gate.entered // X admitted in Redis under Per(3, hour); its answer held
	require.NoError(t, b.SetLimit(rxthrottle.Per(1, time.Hour)))
	require.Eventually(t, func() bool { return a.s.lim.Load().limits[0].N == 1 }, 30*time.Second, time.Millisecond, "A's watch reads Per(1, hour)")
	close(gate.open)
	settled(t, a.s, a.keys[0], 2)
	e := emissions(t, srv, a)
	require.Len(t, e, 5, "%v", e)
	for i := 3; i < len(e); i++ {
		require.GreaterOrEqual(t, e[i], e[i-1]+micros(time.Hour), "departure %d under Per(1, hour): %v", i, e)
	}
	clk.Add(3 * time.Hour)
	require.NoError(t, recv(t, sleeper))
	require.NoError(t, recv(t, late))
}
