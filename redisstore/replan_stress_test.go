package redisstore

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestReplanChurn: sleepers of a Bucket whose limits go back and forth
// (Per(4, hour), Per(2, hour), ... ending at Per(2, hour)) by this
// process's SetLimit and another's, while half of them give up at random
// instants (before, during or after a SetLimit, their ask again in flight
// or not). What must hold whatever the interleaving: each caller that
// gave up ends with context.Canceled, counted once; the others depart,
// the stored window then as if Per(2, hour) had always been in force
// (every reservation ahead >= the one two before + W), nothing else kept;
// and Stats add up.
func TestReplanChurn(t *testing.T) {
	clk := newSignalClock()
	a, srv := newTestBucket(t, rxthrottle.Per(4, time.Hour), WithClock(clk))
	a.s.sleeping = func(time.Duration) {}
	b, err := NewBucket(srv.Client(t), "test", rxthrottle.Per(4, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, a.WaitN(ctx, 4))

	const sleepers = 8
	var wg sync.WaitGroup
	errs := make([]error, sleepers)
	cancels := make([]context.CancelFunc, sleepers)
	for i := range sleepers {
		cctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		wg.Go(func() { errs[i] = a.Wait(cctx) })
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	settled(t, a.s, a.keys[0], sleepers)

	var churn sync.WaitGroup
	churn.Go(func() {
		for i, l := range []int{2, 4, 2, 4, 2} {
			setter := []*Bucket{a, b}[i%2]
			require.NoError(t, setter.SetLimit(rxthrottle.Per(l, time.Hour)))
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		}
	})
	gaveUp := map[int]bool{}
	for i := range sleepers / 2 {
		k := 2 * i
		gaveUp[k] = true
		churn.Go(func() {
			time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond)
			cancels[k]()
		})
	}
	churn.Wait()
	// The SetLimit of b reaches a by a's watch: until a's limits are
	// b's, its sleepers may still be re-planned.
	require.Eventually(t, func() bool {
		return a.s.lim.Load().enc == encodeLimits([]rxthrottle.Limit{rxthrottle.Per(2, time.Hour)})
	},
		10*time.Second, time.Millisecond)
	settled(t, a.s, a.keys[0], sleepers-len(gaveUp))

	e := emissions(t, srv, a)
	require.Len(t, e, 4+sleepers-len(gaveUp), "the first four's and the sleepers' left: %v", e)
	for i := 4; i < len(e); i++ {
		require.GreaterOrEqual(t, e[i], e[i-2]+micros(time.Hour), "departure %d: %v", i, e)
	}
	for range sleepers {
		clk.Add(time.Hour)
	}
	wg.Wait()
	for i, err := range errs {
		if gaveUp[i] {
			require.ErrorIs(t, err, context.Canceled, "sleeper %d", i)
		} else {
			require.NoError(t, err, "sleeper %d", i)
		}
	}
	requireCounts(t, a, [5]uint64{1 + sleepers - uint64(len(gaveUp)), uint64(len(gaveUp)), 0, 0, 0})
	requireNoWindow(t, a)
}
