package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCancelNewestGivesSlotBack: a wait cancelled while it is the newest
// reservation leaves the schedule as if it had never arrived.
func TestCancelNewestGivesSlotBack(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk))
	clk.watch(b.s)
	require.NoError(t, b.Wait(context.Background()))
	before := emissions(t, srv, b)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	clk.nextTimer(t)
	require.Len(t, emissions(t, srv, b), 2, "the waiting caller holds a reservation")
	cancel()
	require.ErrorIs(t, recv(t, done), context.Canceled)
	require.Equal(t, before, emissions(t, srv, b), "the cancelled reservation is gone")

	// The next caller gets the slot the cancelled one had.
	a := reserve(t, b)
	require.Equal(t, before[0]+micros(time.Hour), a.e)
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Admitted)
	assert.Equal(t, uint64(1), st.Cancelled)
	assert.Equal(t, 0, st.Queued)
}

// TestCancelBehindGivesTokenBack: a wait cancelled after a later caller
// reserved gives its token back too; the later caller keeps its time (its
// reply is out), so the window holds. When the later caller, the newest,
// is cancelled as well, the schedule is as if neither had arrived.
func TestCancelBehindGivesTokenBack(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk))
	clk.watch(b.s)
	require.NoError(t, b.Wait(context.Background()))

	ctx2, cancel2 := context.WithCancel(context.Background())
	ctx3, cancel3 := context.WithCancel(context.Background())
	done2, done3 := make(chan error, 1), make(chan error, 1)
	go func() { done2 <- b.Wait(ctx2) }()
	clk.nextTimer(t)
	go func() { done3 <- b.Wait(ctx3) }()
	clk.nextTimer(t)
	all := emissions(t, srv, b)
	require.Len(t, all, 3)

	cancel2()
	require.ErrorIs(t, recv(t, done2), context.Canceled)
	require.Equal(t, []int64{all[0], all[2]}, emissions(t, srv, b), "caller 2's token is given back, caller 3 keeps its time")

	cancel3()
	require.ErrorIs(t, recv(t, done3), context.Canceled)
	require.Equal(t, all[:1], emissions(t, srv, b))
	assert.Equal(t, uint64(2), b.Stats().Cancelled)
	a := reserve(t, b)
	require.Equal(t, all[1], a.e, "the next caller gets caller 2's time, as if neither had arrived")
}

// TestCancelBurstTwin: several reservations may share one emission time;
// cancelling one of them removes one, whichever it is, which leaves the same
// schedule.
func TestCancelBurstTwin(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(3, time.Hour), WithClock(clk))
	clk.watch(b.s)
	require.NoError(t, b.Wait(context.Background()))
	b.Pause(clk.Now().Add(time.Minute)) // the next callers go together when it ends
	ctxs := make([]context.CancelFunc, 2)
	dones := make([]chan error, 2)
	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		ctxs[i], dones[i] = cancel, make(chan error, 1)
		go func() { dones[i] <- b.Wait(ctx) }()
		clk.nextTimer(t)
	}
	all := emissions(t, srv, b)
	require.Len(t, all, 3)
	require.Equal(t, all[1], all[2], "callers 2 and 3 share a slot time")
	ctxs[0]() // not the newest, but its twin's time is the tail
	require.ErrorIs(t, recv(t, dones[0]), context.Canceled)
	require.Equal(t, all[:2], emissions(t, srv, b))
	ctxs[1]()
	require.ErrorIs(t, recv(t, dones[1]), context.Canceled)
	require.Equal(t, all[:1], emissions(t, srv, b))
}
