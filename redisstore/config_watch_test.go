package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// While the breaker is open, the configuration watch of a caller sleeping
// on its departure reads nothing (the next caller's probe will tell) and
// wakes once a period, confBound/2, as when it reads: it must not spin on
// a due instant already past. Without its own clock moving on while it
// skips, it woke as fast as timers fire for as long as the caller slept
// (an hour here), a core burnt. Asserted: at most the periods that fit in
// the time measured, plus two; a slow machine only lowers the count.
func TestConfWatchWaitsWhileBreakerOpen(t *testing.T) {
	clk := newSignalClock()
	b, _ := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk))
	clk.watch(b.s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, b.Wait(ctx))
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	require.Greater(t, clk.nextTimer(t), time.Hour-time.Minute, "the second caller sleeps on its departure")

	w := &b.s.conf.watch
	b.s.brk.open.Store(true) // as after Redis failed; nothing else changes
	start, before := time.Now(), w.wakes.Load()
	time.Sleep(4 * confBound)
	woke, elapsed := w.wakes.Load()-before, time.Since(start)
	b.s.brk.open.Store(false)
	require.LessOrEqual(t, woke, int64(elapsed/(confBound/2))+2, "the watch woke %d times in %v with the breaker open", woke, elapsed)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
