package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// requireCounts checks b's Admitted, Cancelled, Refused, Failed and
// Queued, in that order.
func requireCounts(t *testing.T, b interface{ Stats() rxthrottle.Stats }, want [5]uint64) {
	t.Helper()
	st := b.Stats()
	require.Equal(t, want, [5]uint64{st.Admitted, st.Cancelled, st.Refused, st.Failed, uint64(st.Queued)},
		"Admitted, Cancelled, Refused, Failed, Queued")
}

// startSleepers starts n callers of b.Wait and returns their results once all
// n sleep on a departure in b's window (settled).
func startSleepers(t *testing.T, b *Bucket, n int) chan error {
	t.Helper()
	done := make(chan error, n)
	for range n {
		go func() { done <- b.Wait(context.Background()) }()
	}
	settled(t, b.s, b.keys[0], n)
	return done
}

// requireSecondWindowOfFour checks the end of an A→B→A re-plan over
// Per(4, hour) with four callers first and four sleepers (done): the
// sleepers' departures are all in the second window, as if Per(4, hour)
// had always been in force, and they go once the clock gets there.
func requireSecondWindowOfFour(t *testing.T, srv *redistest.Server, b *Bucket, clk *signalClock, done chan error) {
	t.Helper()
	e := emissions(t, srv, b)
	require.Len(t, e, 8, "the first four's and the four sleepers': %v", e)
	for i := 4; i < 8; i++ {
		require.GreaterOrEqual(t, e[i], e[i-4]+micros(time.Hour), "departure %d: %v", i, e)
		require.Less(t, e[i], e[0]+micros(time.Hour+time.Minute), "departure %d planned past the second window: %v", i, e)
	}
	clk.Add(time.Hour + time.Minute)
	for range 4 {
		require.NoError(t, recv(t, done))
	}
	requireCounts(t, b, [5]uint64{5, 0, 0, 0, 0})
}
