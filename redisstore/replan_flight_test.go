package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// batchGate holds the next run of the batch script once shut (not the
// configuration's: a SetLimit goes through), so that a test can act while
// the asks a re-plan sent are in flight: before the script runs in Redis,
// or, late, after it ran and before its answer lands.
type batchGate struct {
	scriptGate
	late bool
}

func newBatchGate() *batchGate {
	return &batchGate{scriptGate: scriptGate{entered: make(chan struct{}), open: make(chan struct{})}}
}

func (g *batchGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		batch := len(args) > 1 && (args[1] == batchScript.Hash() || args[0] == "eval" && !isConf(args[1]))
		if !batch || !g.shut.CompareAndSwap(true, false) {
			return next(ctx, cmd)
		}
		var err error
		if g.late {
			err = next(ctx, cmd)
		}
		g.entered <- struct{}{}
		<-g.open
		if g.late {
			return err
		}
		return next(ctx, cmd)
	}
}

// isConf says whether the source of an EVAL is the configuration script's.
func isConf(src any) bool {
	s, _ := src.(string)
	return redis.NewScript(s).Hash() == confScript.Hash()
}

// gatedBucket is a Bucket of limit on a fresh server whose client holds
// the batch script's runs behind the gate, on clk's virtual time.
func gatedBucket(t *testing.T, limit rxthrottle.Limit, clk *signalClock) (*Bucket, *redistest.Server, *batchGate) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	gate := newBatchGate()
	rdb.AddHook(gate)
	b, err := NewBucket(rdb, "test", limit, WithTimeout(suiteTimeout), WithClock(clk))
	require.NoError(t, err)
	b.s.sleeping = func(time.Duration) {}
	return b, srv, gate
}

// TestReplanCancelInFlight: a sleeper re-planned by a SetLimit whose
// context ends while its ask again is in flight ends with its context's
// error, counted once as cancelled; the admission the run made for it is
// withdrawn (not kept in the window), and the other sleeper re-planned
// with it departs as if it had never been made.
func TestReplanCancelInFlight(t *testing.T) {
	clk := newSignalClock()
	b, srv, gate := gatedBucket(t, rxthrottle.Per(2, time.Hour), clk)
	ctx := context.Background()
	require.NoError(t, b.WaitN(ctx, 2))
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- b.Wait(ctx1) }()
	settled(t, b.s, b.keys[0], 1)
	go func() { second <- b.Wait(ctx) }()
	settled(t, b.s, b.keys[0], 2)

	gate.shut.Store(true)
	require.NoError(t, b.SetLimit(rxthrottle.Per(1, time.Hour)))
	<-gate.entered // the re-planned asks, in flight
	cancel1()
	require.ErrorIs(t, recv(t, first), context.Canceled)
	close(gate.open)
	settled(t, b.s, b.keys[0], 1)
	e := emissions(t, srv, b)
	require.Len(t, e, 3, "the first two's and the second sleeper's, the first's withdrawn: %v", e)
	require.GreaterOrEqual(t, e[2], e[1]+micros(time.Hour), "%v", e)
	require.Less(t, e[2], e[0]+micros(time.Hour+time.Minute), "the second sleeper goes in the second window: %v", e)
	clk.Add(time.Hour + time.Minute)
	require.NoError(t, recv(t, second))
	requireCounts(t, b, [5]uint64{2, 1, 0, 0, 0})
	requireNoWindow(t, b)
}

// TestReplanAnswerLandsAfterSecondSetLimit: A→B→A where the asks
// re-planned under B are in flight as the limits go back to A: their
// answers, planned under B, are re-planned as they land (group_run.go),
// and the four sleepers depart in the second window, as under A.
func TestReplanAnswerLandsAfterSecondSetLimit(t *testing.T) {
	clk := newSignalClock()
	b, srv, gate := gatedBucket(t, rxthrottle.Per(4, time.Hour), clk)
	ctx := context.Background()
	require.NoError(t, b.WaitN(ctx, 4))
	done := startSleepers(t, b, 4)

	gate.shut.Store(true)
	require.NoError(t, b.SetLimit(rxthrottle.Per(2, time.Hour)))
	<-gate.entered // the asks re-planned under B, in flight
	require.NoError(t, b.SetLimit(rxthrottle.Per(4, time.Hour)))
	close(gate.open)
	settled(t, b.s, b.keys[0], 4)
	requireSecondWindowOfFour(t, srv, b, clk, done)
	requireNoWindow(t, b)
}
