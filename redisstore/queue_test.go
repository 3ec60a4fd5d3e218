package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// TestMaxQueue (SPEC.md, "Queue bound"): with rxthrottle.WithMaxQueue(1),
// a caller that would wait while one caller of this process waits already
// is refused at once, consuming nothing (an error wrapping
// rxthrottle.ErrQueueFull, counted in Stats.Refused); one that may go at
// once is not; once the waiting caller has gone, the next may wait again.
func TestMaxQueue(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(2, time.Hour), rxthrottle.WithMaxQueue(1), rxthrottle.WithClock(clk))
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx), "the queue is empty")
	require.NoError(t, b.Wait(ctx), "a free token: no wait, whatever the queue")
	waiting := make(chan error, 1)
	go func() { waiting <- b.Wait(ctx) }()
	clk.nextTimer(t) // it waits an hour
	err := b.Wait(ctx)
	require.ErrorIs(t, err, rxthrottle.ErrQueueFull)
	require.ErrorContains(t, err, "redisstore: Wait: 1 callers of this process wait already")
	_, err = b.Acquire(ctx)
	require.ErrorIs(t, err, rxthrottle.ErrQueueFull)
	require.Len(t, emissions(t, srv, b), 3, "the refused callers took nothing")
	require.EqualValues(t, 2, b.Stats().Refused)
	clk.Add(time.Hour)
	require.NoError(t, recv(t, waiting))
	go func() { waiting <- b.Wait(ctx) }()
	clk.nextTimer(t) // the queue has room again
	clk.Add(2 * time.Hour)
	require.NoError(t, recv(t, waiting))
}
