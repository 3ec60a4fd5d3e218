package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// settled waits until the window of s stored under key has n departures
// ahead, every one planned under the limits in force (or a key's own),
// and no call in flight: the re-planning a SetLimit started is over. It
// fails the test after 10 s (a re-plan that never ends is a bug).
func settled(t *testing.T, s *schedule, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := func() string {
			enc := s.lim.Load().enc
			g := &s.group
			g.mu.Lock()
			defer g.mu.Unlock()
			win := g.windows[key]
			if win == nil {
				return "no window"
			}
			stale := 0
			for _, d := range win.departing {
				if d.a.tier == "" && d.a.ranUnder != enc {
					stale++
				}
			}
			if len(win.departing) != n || stale > 0 || win.flight != nil {
				return fmt.Sprintf("%d departures (%d stale), in flight %v", len(win.departing), stale, win.flight != nil)
			}
			return ""
		}()
		if got == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window never settled to %d departures: %s", n, got)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReplanBackAndForth: A→B→A in quick succession (Per(4, hour), then
// Per(2, hour), then Per(4, hour) again). Whether the asks re-planned
// under B have landed or not by the second SetLimit, the schedule ends as
// if Per(4, hour) had always been in force: the four sleepers all depart
// in the second window, none left on a departure B gave it.
func TestReplanBackAndForth(t *testing.T) {
	clk := newSignalClock()
	a, srv := newTestBucket(t, rxthrottle.Per(4, time.Hour), WithClock(clk))
	a.s.sleeping = func(time.Duration) {}
	ctx := context.Background()
	require.NoError(t, a.WaitN(ctx, 4))
	done := startSleepers(t, a, 4)

	require.NoError(t, a.SetLimit(rxthrottle.Per(2, time.Hour)))
	require.NoError(t, a.SetLimit(rxthrottle.Per(4, time.Hour)))
	settled(t, a.s, a.keys[0], 4)
	requireSecondWindowOfFour(t, srv, a, clk, done)
}

// TestReplanRaisedLimitGoesAtOnce: Per(2, hour) raised to Per(4, hour)
// while two callers sleep on the second window: the window has room for
// them now, so they go at once, without the clock moving.
func TestReplanRaisedLimitGoesAtOnce(t *testing.T) {
	for _, by := range []string{"own", "other"} {
		t.Run(by, func(t *testing.T) {
			clk := newSignalClock()
			a, srv := newTestBucket(t, rxthrottle.Per(2, time.Hour), WithClock(clk))
			a.s.sleeping = func(time.Duration) {}
			b, err := NewBucket(srv.Client(t), "test", rxthrottle.Per(2, time.Hour), WithTimeout(suiteTimeout))
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, a.WaitN(ctx, 2))
			done := startSleepers(t, a, 2)
			require.NoError(t, map[string]*Bucket{"own": a, "other": b}[by].SetLimit(rxthrottle.Per(4, time.Hour)))
			for range 2 {
				select {
				case err := <-done:
					require.NoError(t, err)
				case <-time.After(30 * time.Second):
					t.Fatal("a sleeper still waits for the second window under Per(4, hour)")
				}
			}
			e := emissions(t, srv, a)
			require.Len(t, e, 4, "%v", e)
			require.LessOrEqual(t, maxInWindow(e, micros(time.Hour)), 4, "%v", e)
			requireCounts(t, a, [5]uint64{3, 0, 0, 0, 0})
		})
	}
}

// TestReplanKeepsPriorities: a caller of priority 1 went before one of
// priority -1 (it bumped it); a SetLimit re-plans both, and the higher
// still goes first (SPEC.md, "Priorities"): after the first departure
// under the new limits, the high one is done and the low one waits.
func TestReplanKeepsPriorities(t *testing.T) {
	clk := newSignalClock()
	a, _ := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk))
	a.s.sleeping = func(time.Duration) {}
	ctx := context.Background()
	require.NoError(t, a.Wait(ctx))
	low, high := make(chan error, 1), make(chan error, 1)
	go func() { low <- a.Wait(rxthrottle.WithPriority(ctx, -1)) }()
	settled(t, a.s, a.keys[0], 1)
	go func() { high <- a.Wait(rxthrottle.WithPriority(ctx, 1)) }()
	settled(t, a.s, a.keys[0], 2)

	require.NoError(t, a.SetLimit(rxthrottle.Per(1, 2*time.Hour)))
	settled(t, a.s, a.keys[0], 2)
	clk.Add(2*time.Hour + time.Minute)
	require.NoError(t, recv(t, high), "the high caller goes first")
	require.Equal(t, 1, a.Stats().Queued, "the low one waits for the next window")
	select {
	case err := <-low:
		t.Fatalf("the low caller went in the high one's window: %v", err)
	default:
	}
	clk.Add(2 * time.Hour)
	require.NoError(t, recv(t, low))
}

// TestReplanLeavesKeyTiers: a Keyed limiter's SetLimit re-plans the
// sleepers of keys on its limits, not those of a key with limits of its
// own (WithKeyLimits): "paid"'s sleeper keeps its departure (its
// reservation stays, the same member), "free"'s is re-planned.
func TestReplanLeavesKeyTiers(t *testing.T) {
	clk := newSignalClock()
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "tiers", rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(tierOfUser),
		WithTimeout(suiteTimeout), WithClock(clk))
	require.NoError(t, err)
	k.s.sleeping = func(time.Duration) {}
	ctx := context.Background()
	require.NoError(t, k.WaitN(ctx, "paid", 3))
	require.NoError(t, k.Wait(ctx, "free"))
	done := make(chan error, 2)
	go func() { done <- k.Wait(ctx, "paid") }()
	go func() { done <- k.Wait(ctx, "free") }()
	paid, free := k.keys("paid")[0], k.keys("free")[0]
	settled(t, k.s, paid, 1)
	settled(t, k.s, free, 1)
	before := departingIDs(k.s, paid)

	require.NoError(t, k.SetLimit(rxthrottle.Per(1, 2*time.Hour)))
	settled(t, k.s, free, 1)
	settled(t, k.s, paid, 1)
	require.Equal(t, before, departingIDs(k.s, paid), "the paid key's reservation, under its own limits, is kept")
	clk.Add(time.Hour + time.Minute)
	require.NoError(t, recv(t, done), "paid goes in its second hour")
	require.Equal(t, 1, k.Stats().Queued, "free now waits for two hours")
	clk.Add(time.Hour)
	require.NoError(t, recv(t, done))
}

// departingIDs returns the reservation ids of the departures ahead in the
// window stored under key.
func departingIDs(s *schedule, key string) []int64 {
	g := &s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	var ids []int64
	for _, d := range g.windows[key].departing {
		ids = append(ids, d.a.id)
	}
	return ids
}

// TestReplanLowerMixed: Per(4, hour) lowered to Per(2, hour) with three
// sleepers: a (cost 1), c (cost 2), and h (cost 3, priority 1, so ahead
// of both). h fails with ErrInvalidCost; a and c ask again in their
// places, as if Per(2, hour) had always been in force: a in the second
// window, c (two tokens) at the third, and the stored window holds at
// most 2 an hour.
func TestReplanLowerMixed(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(4, time.Hour), WithClock(clk))
	b.s.sleeping = func(time.Duration) {}
	ctx := context.Background()
	require.NoError(t, b.WaitN(ctx, 4))
	a, c, h := make(chan error, 1), make(chan error, 1), make(chan error, 1)
	go func() { a <- b.Wait(ctx) }()
	settled(t, b.s, b.keys[0], 1)
	go func() { c <- b.WaitN(ctx, 2) }()
	settled(t, b.s, b.keys[0], 2)
	go func() { h <- b.WaitN(rxthrottle.WithPriority(ctx, 1), 3) }()
	settled(t, b.s, b.keys[0], 3)

	require.NoError(t, b.SetLimit(rxthrottle.Per(2, time.Hour)))
	require.ErrorIs(t, recv(t, h), rxthrottle.ErrInvalidCost)
	settled(t, b.s, b.keys[0], 2)
	e := emissions(t, srv, b)
	require.Len(t, e, 7, "%v", e)
	for i := 4; i < 7; i++ {
		require.GreaterOrEqual(t, e[i], e[i-2]+micros(time.Hour), "departure %d: %v", i, e)
	}
	require.LessOrEqual(t, maxInWindow(e[2:], micros(time.Hour)), 2, "%v", e)
	clk.Add(time.Hour + time.Minute)
	require.NoError(t, recv(t, a), "a goes in the second window")
	require.Empty(t, c, "c's second token is the third window's")
	clk.Add(time.Hour)
	require.NoError(t, recv(t, c))
	requireCounts(t, b, [5]uint64{3, 1, 0, 0, 0})
}
