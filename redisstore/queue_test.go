package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
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
	clk.watch(b.s)
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

// TestKeyedErrorsNameTheMethod (issue 28, item 5a): Keyed's Wait and
// Acquire name themselves in their errors, not WaitN and AcquireN.
func TestKeyedErrorsNameTheMethod(t *testing.T) {
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "names", rxthrottle.Per(2, time.Hour), rxthrottle.WithMaxQueue(0), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, k.WaitN(ctx, "a", 2), "free now: no wait")
	for op, call := range map[string]func() error{
		"Wait":     func() error { return k.Wait(ctx, "a") },
		"WaitN":    func() error { return k.WaitN(ctx, "a", 2) },
		"Acquire":  func() error { _, err := k.Acquire(ctx, "a"); return err },
		"AcquireN": func() error { _, err := k.AcquireN(ctx, "a", 2); return err },
	} {
		err := call()
		require.ErrorIs(t, err, rxthrottle.ErrQueueFull, op)
		require.ErrorContains(t, err, "redisstore: "+op+": 0 callers of this process wait already")
	}
}

// TestKeyedMaxQueuePerKey (SPEC.md, "Queue bound": on a keyed limiter the
// bound is per key): with WithMaxQueue(1), a caller of key "a" waiting
// does not make a caller of key "b" that would wait refused; a second
// one of "a" is. Counted across the keys (as before this test), the
// caller of "b" was refused.
func TestKeyedMaxQueuePerKey(t *testing.T) {
	clk := newSignalClock()
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "perkey", rxthrottle.Per(1, time.Hour), rxthrottle.WithMaxQueue(1), rxthrottle.WithClock(clk), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	clk.watch(k.s)
	ctx := context.Background()
	waiting := make(chan error, 2)
	for _, key := range []string{"a", "b"} {
		require.NoError(t, k.Wait(ctx, key), "a free token")
		go func() { waiting <- k.Wait(ctx, key) }()
		clk.nextTimer(t) // it waits an hour: the one waiter of its key
	}
	require.ErrorIs(t, k.Wait(ctx, "a"), rxthrottle.ErrQueueFull)
	st := k.Stats()
	require.EqualValues(t, 1, st.Refused)
	clk.Add(time.Hour)
	require.NoError(t, recv(t, waiting))
	require.NoError(t, recv(t, waiting))
}
