package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestReplanCostlyBreakerOpen: a caller sleeping on its departure whose
// cost a SetLimit lowers the smallest N below fails with ErrInvalidCost,
// counted as cancelled, whatever the breaker and the failure policy: no
// answer of Redis decides it (round's rule for any caller, SPEC.md
// "Changing limits"). Re-planned (bumped), it skipped that check and met
// the open breaker: FailOpen admitted a cost the limits no longer serve,
// FailClosed failed it with ErrCircuitOpen.
func TestReplanCostlyBreakerOpen(t *testing.T) {
	for _, policy := range []FailurePolicy{FailClosed, FailOpen, FallbackLocal} {
		for _, backoff := range []time.Duration{0, time.Hour} {
			t.Run(policy.String()+"/"+backoff.String(), func(t *testing.T) {
				clk := newSignalClock()
				b, _ := newTestBucket(t, rxthrottle.Per(4, time.Hour), WithClock(clk), WithFailurePolicy(policy))
				b.s.sleeping = func(time.Duration) {}
				ctx := context.Background()
				require.NoError(t, b.WaitN(ctx, 4))
				done := make(chan error, 1)
				go func() { done <- b.WaitN(ctx, 3) }()
				settled(t, b.s, b.keys[0], 1)

				brk := &b.s.brk
				brk.mu.Lock()
				brk.backoff, brk.until, brk.last = brk.first, brk.clock.Now().Add(backoff), errRefused
				brk.open.Store(true)
				brk.mu.Unlock()
				require.NoError(t, b.SetLimit(rxthrottle.Per(2, time.Hour)))
				err := recv(t, done)
				require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
				require.NotErrorIs(t, err, ErrCircuitOpen)
				requireCounts(t, b, [5]uint64{1, 1, 0, 0, 0})
			})
		}
	}
}

// TestReplanBreakerOpenKeepsSchedule: a SetLimit lowers Per(4, hour) to
// Per(2, hour) while the breaker is in its back-off (Redis failed a moment
// ago, and answers again: the SetLimit reached it). The two sleepers it
// re-plans ask again in the run that withdraws their reservations, and
// depart as the new limits say, in the second window, whatever the
// failure policy. They met the breaker instead: FailOpen let both go at
// once (a lowering SetLimit making callers earlier), FailClosed failed
// them with ErrCircuitOpen though they held reservations.
func TestReplanBreakerOpenKeepsSchedule(t *testing.T) {
	for _, policy := range []FailurePolicy{FailClosed, FailOpen, FallbackLocal} {
		t.Run(policy.String(), func(t *testing.T) {
			clk := newSignalClock()
			b, srv := newTestBucket(t, rxthrottle.Per(4, time.Hour), WithClock(clk), WithFailurePolicy(policy))
			b.s.sleeping = func(time.Duration) {}
			ctx := context.Background()
			require.NoError(t, b.WaitN(ctx, 4))
			done := startSleepers(t, b, 2)

			brk := &b.s.brk
			brk.mu.Lock()
			brk.backoff, brk.until, brk.last = brk.first, brk.clock.Now().Add(time.Hour), errRefused
			brk.open.Store(true)
			brk.mu.Unlock()
			require.NoError(t, b.SetLimit(rxthrottle.Per(2, time.Hour)))
			settled(t, b.s, b.keys[0], 2)
			require.Empty(t, done, "nobody goes before the second window")
			e := emissions(t, srv, b)
			require.Len(t, e, 6, "%v", e)
			for i := 4; i < 6; i++ {
				require.GreaterOrEqual(t, e[i], e[i-2]+micros(time.Hour), "departure %d: %v", i, e)
			}
			clk.Add(time.Hour + time.Minute)
			require.NoError(t, recv(t, done))
			require.NoError(t, recv(t, done))
			requireCounts(t, b, [5]uint64{3, 0, 0, 0, 0})
		})
	}
}
