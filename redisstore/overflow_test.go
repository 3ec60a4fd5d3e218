package redisstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// TestMicrosSaturates: the conversion to microseconds rounds up and never
// wraps around.
func TestMicrosSaturates(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{
		{1, 1},
		{time.Microsecond, 1},
		{time.Microsecond + 1, 2},
		{time.Duration(math.MaxInt64), math.MaxInt64/1000 + 1},
		{time.Duration(math.MaxInt64 - 500), math.MaxInt64/1000 + 1},
		{0, 0},
		{-5, 0},
	} {
		require.Equal(t, c.want, micros(c.d), "micros(%d)", int64(c.d))
	}
	require.Equal(t, time.Duration(math.MaxInt64), admission{e: maxTime, now: -maxTime}.delay(), "a delay too long for a Duration saturates")
}

// TestWindowTooLongForRedis: a window longer than the scripts can count
// exactly is refused at construction with a clear error, not admitted
// wrongly (micros overflowed: everyone went at once).
func TestWindowTooLongForRedis(t *testing.T) {
	for _, l := range []rxthrottle.Limit{rxthrottle.Per(1, time.Duration(math.MaxInt64)), rxthrottle.Per(1, time.Duration(maxWindow+1)*time.Microsecond)} {
		_, err := NewBucket(nopClient(t), "a", l)
		require.ErrorContains(t, err, "redisstore: limit #1: window "+l.Window.String()+" is longer than", "%v", l)
		_, err = NewKeyed(nopClient(t), "a", rxthrottle.Per(1, time.Second), WithLimit(l))
		require.ErrorContains(t, err, "redisstore: limit #2: window", "%v", l)
	}
	_, err := NewBucket(nopClient(t), "a", rxthrottle.Per(1, time.Duration(maxWindow)*time.Microsecond))
	require.NoError(t, err, "the longest window Redis can count")
}

// TestHugeWindowSaturates: Per(1, 5e18ns) (158 years): the second caller
// waits a window, the third at least as long (its time saturates at the
// scripts' horizon): nobody goes at once. The delay conversion overflowed
// and let the third caller go.
func TestHugeWindowSaturates(t *testing.T) {
	clk := newSignalClock()
	b, _ := newTestBucket(t, rxthrottle.Per(1, 5e18), WithClock(clk))
	clk.watch(b.s)
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	a2 := reserve(t, b)
	require.Greater(t, a2.delay(), time.Duration(5e18)-time.Minute)
	a3 := reserve(t, b)
	require.Equal(t, maxTime, a3.e, "the third caller's time saturates")
	require.GreaterOrEqual(t, a3.delay(), a2.delay())

	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	d := clk.nextTimer(t)
	require.GreaterOrEqual(t, d, a2.delay(), "the fourth caller waits too")
	cancel()
	require.ErrorIs(t, recv(t, done), context.Canceled)
}

// TestPauseFarAhead: a pause centuries ahead holds (it saturates) instead
// of failing with "ERR invalid expire time" and being lost.
func TestPauseFarAhead(t *testing.T) {
	var log errorLog
	mock := clock.NewMock()
	b, srv := newTestBucket(t, rxthrottle.Per(10, time.Second), WithClock(mock), OnError(log.hook))
	for _, until := range []time.Time{mock.Now().AddDate(300, 0, 0), mock.Now().Add(time.Duration(math.MaxInt64))} {
		b.Pause(until)
		require.Zero(t, log.len(), "Pause(%v) failed: %v", until, log.errs)
		ok, err := b.Allow(context.Background())
		require.NoError(t, err)
		require.False(t, ok, "Allow during a pause to %v", until)
		require.Greater(t, pttl(t, srv, b.keys[1]), 100*365*24*time.Hour)
		a := reserve(t, b)
		require.Equal(t, maxTime, a.e, "the pause saturates at the scripts' horizon")
	}
}
