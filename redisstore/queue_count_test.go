package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestMaxQueueCountsEveryWait (SPEC.md, "Queue bound"): WithMaxQueue
// counts the callers of this process known to wait wherever they wait,
// and OnWait hears of each once, when it learns it waits: with a bound of
// 2 and the one token of Per(1, time.Hour) held, A (blocked by it, the
// head of the line) and B (behind it in the line) wait, and C, who would
// wait behind them, is refused; Allow does not go before them. The token
// given back, A goes at once and B, whose turn comes, is given its
// departure an hour ahead (still counted, not told again); E, arriving
// with nobody in line, asks, and waits for its departure an hour after
// B's; F and G, at the bound, ask for an admission at once only, and
// are refused. Nobody refused took anything, nor heard of OnWait.
func TestMaxQueueCountsEveryWait(t *testing.T) {
	clk := newSignalClock()
	told := make(chan string, 8)
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour), rxthrottle.WithMaxQueue(2), rxthrottle.WithClock(clk),
		rxthrottle.OnWait(func(ev rxthrottle.Event) { told <- ev.Arrived.Format(time.TimeOnly) }))
	clk.watch(b.s)
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	hear := func(who string) {
		t.Helper()
		select {
		case <-told:
		case <-time.After(5 * time.Second):
			t.Fatalf("OnWait did not hear of %s", who)
		}
	}
	refused := func(why string) {
		t.Helper()
		// Cancelled after 5s if it waits (no deadline, which the script
		// would refuse first).
		ctx, cancel := context.WithCancel(ctx)
		defer time.AfterFunc(5*time.Second, cancel).Stop()
		defer cancel()
		require.ErrorIs(t, b.Wait(ctx), rxthrottle.ErrQueueFull, why)
	}
	done := make(map[string]chan error)
	wait := func(who string) {
		done[who] = make(chan error, 1)
		go func() { done[who] <- b.Wait(ctx) }()
	}
	wait("A")
	hear("A")
	clk.nextTimer(t) // A sleeps between its asks, blocked by the held token
	wait("B")
	hear("B") // B waits in the line behind A
	refused("C would wait behind 2 callers counted waiting")
	ok, err := b.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "Allow went before the callers blocked by the held token")

	tok.Cancel()
	require.NoError(t, recv(t, done["A"]), "A goes once the token is given back")
	require.Equal(t, time.Hour, clk.nextTimer(t).Round(time.Hour), "B's departure is an hour after A's")
	wait("E")
	hear("E")
	require.Equal(t, 2*time.Hour, clk.nextTimer(t).Round(time.Hour), "E's departure is an hour after B's")
	refused("F would wait for a departure behind 2 callers counted waiting")
	refused("G too")

	clk.Add(time.Hour)
	require.NoError(t, recv(t, done["B"]))
	clk.Add(time.Hour)
	require.NoError(t, recv(t, done["E"]))
	require.Len(t, emissions(t, srv, b), 3, "A, B and E departed; the refused callers took nothing")
	require.EqualValues(t, 3, b.Stats().Refused)
	require.Empty(t, told, "OnWait heard of a caller twice, or of a refused one")
	b.s.group.mu.Lock()
	require.Empty(t, b.s.group.windows, "a window kept a count once everybody was done")
	b.s.group.mu.Unlock()
}
