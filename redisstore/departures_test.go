package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// keepAll is a limit that never binds in these tests and keeps every
// completion in Redis for an hour, for emissions to count.
var keepAll = rxthrottle.Per(10, time.Hour)

// departing returns the callers of b given a departure they have not
// reached.
func departing(b *Bucket) int {
	g := &b.s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.departing[b.keys[0]])
}

// TestPriorityTakesDeparture: a caller of higher priority goes before the
// callers of lower priority that the script has given a departure they
// have not reached (SPEC.md, "Priorities"), and they keep their order
// (priority, then arrival) behind it. Only the order of the departures is
// checked (they are a window apart), never a duration. Without
// departures.go the caller of priority 1 goes last.
func TestPriorityTakesDeparture(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1, 300*time.Millisecond), WithTimeout(10*time.Second), rxthrottle.WithLimit(keepAll))
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i, p := range []int{-1, 0, 1} {
		wg.Go(func() {
			require.NoError(t, b.Wait(rxthrottle.WithPriority(ctx, p)))
			mu.Lock()
			order = append(order, p)
			mu.Unlock()
		})
		if i < 2 {
			require.Eventually(t, func() bool { return departing(b) == i+1 }, 10*time.Second, time.Millisecond)
		}
	}
	wg.Wait()
	require.Equal(t, []int{1, 0, -1}, order, "the order of the departures by priority")
	st := b.Stats()
	require.EqualValues(t, 4, st.Admitted)
	require.EqualValues(t, 0, st.Cancelled)
	require.Len(t, emissions(t, srv, b), 4, "one token each, the withdrawn reservations gone")
	require.Zero(t, departing(b))
}

// TestBumpedCallerGivesUp: a caller whose departure a caller of higher
// priority took, and which gives up while it asks again, leaves nothing
// behind: no reservation in Redis, no place among the departures, and the
// callers after it go. Without the withdrawal of its admission asked
// again (settled as any caller's that gave up), its reservation stays.
func TestBumpedCallerGivesUp(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1, 300*time.Millisecond), WithTimeout(10*time.Second), rxthrottle.WithLimit(keepAll))
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	lowCtx, cancel := context.WithCancel(rxthrottle.WithPriority(ctx, -1))
	low := make(chan error, 1)
	go func() { low <- b.Wait(lowCtx) }()
	require.Eventually(t, func() bool { return departing(b) == 1 }, 10*time.Second, time.Millisecond)
	b.s.group.mu.Lock()
	first := b.s.group.departing[b.keys[0]][0]
	b.s.group.mu.Unlock()
	high := make(chan error, 1)
	go func() { high <- b.Wait(rxthrottle.WithPriority(ctx, 1)) }()
	// The low caller is bumped: it has its new departure (behind the high
	// one) or is asking for it; it gives up either way.
	require.Eventually(t, func() bool {
		g := &b.s.group
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, d := range g.departing[b.keys[0]] {
			if d.p.prio == -1 && d != first {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, recv(t, low), context.Canceled)
	require.NoError(t, recv(t, high))
	require.NoError(t, b.Wait(ctx))
	st := b.Stats()
	require.EqualValues(t, 3, st.Admitted)
	require.EqualValues(t, 1, st.Cancelled)
	require.Len(t, emissions(t, srv, b), 3, "the low caller's reservations withdrawn")
	require.Zero(t, departing(b))
}
