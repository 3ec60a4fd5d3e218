package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestConfWatchRedisStopped: Redis stops while a caller sleeps on its
// departure. The configuration watch's reads fail (fast: nothing listens),
// and it looks again a period on, not at once: at most the periods that
// fit in the time measured, plus two. The caller still goes at its
// departure (its window grants it, no call to Redis), and then, nobody
// sleeping, the watch ends.
func TestConfWatchRedisStopped(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk))
	b.s.sleeping = func(time.Duration) {}
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	settled(t, b.s, b.keys[0], 1)

	w := &b.s.conf.watch
	require.True(t, w.running.Load(), "a caller sleeps: the watch runs")
	srv.Stop()
	start, before := time.Now(), w.wakes.Load()
	time.Sleep(4 * confBound)
	woke, elapsed := w.wakes.Load()-before, time.Since(start)
	require.LessOrEqual(t, woke, int64(elapsed/(confBound/2))+2, "the watch woke %d times in %v with Redis stopped", woke, elapsed)
	clk.Add(time.Hour + time.Minute)
	require.NoError(t, recv(t, done))
	require.Eventually(t, func() bool { return !w.running.Load() }, 10*time.Second, time.Millisecond, "the watch ends once nobody sleeps")
	require.Zero(t, w.sleepers.Load())
	requireCounts(t, b, [5]uint64{2, 0, 0, 0, 0})
}
