package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestBreakerNoVerdictOnACost: a caller whose cost a SetLimit lowered the
// smallest N below fails with ErrInvalidCost before any call to Redis
// (stillServes), so it is no verdict for the breaker: a half-open breaker
// (its back-off over, no probe in flight) stays so, and the next caller
// probes; an open one (in its back-off) stays open, and the caller gets
// its cost's error, not the failure policy's. The half-open breaker was
// closed ("Redis answered", though it answered nothing), and the open one
// failed the caller with ErrCircuitOpen.
func TestBreakerNoVerdictOnACost(t *testing.T) {
	for _, c := range []struct {
		name    string
		backoff time.Duration // left of the back-off when the caller asks
	}{{"half-open", 0}, {"open", time.Hour}} {
		t.Run(c.name, func(t *testing.T) {
			b, _ := newTestBucket(t, rxthrottle.Per(5, time.Hour), WithPollInterval(time.Hour))
			ctx := context.Background()
			held, err := b.AcquireN(ctx, 5)
			require.NoError(t, err)
			t.Cleanup(held.Release)
			done := make(chan error, 1)
			go func() {
				_, err := b.AcquireN(ctx, 4) // blocked by held, it sleeps until woken
				done <- err
			}()
			// In line behind held: its first answer has landed, and closed
			// nothing the test opens below (Queued counts it from its
			// call, before that answer, which closes an open breaker).
			require.Eventually(t, func() bool { return lineLen(b) == 1 }, 30*time.Second, time.Millisecond, "the caller waits for held tokens")
			require.NoError(t, b.SetLimit(rxthrottle.Per(3, time.Hour)))
			brk := &b.s.brk
			brk.mu.Lock()
			until := brk.clock.Now().Add(c.backoff)
			brk.backoff, brk.until, brk.last = brk.first, until, errRefused
			brk.open.Store(true)
			brk.mu.Unlock()
			require.Empty(t, done, "still waiting")
			b.s.wake.notify() // it asks again
			err = recv(t, done)
			require.ErrorIs(t, err, rxthrottle.ErrInvalidCost)
			require.NotErrorIs(t, err, ErrCircuitOpen)
			brk.mu.Lock()
			open, probing, left := brk.open.Load(), brk.probing, brk.until
			brk.mu.Unlock()
			require.True(t, open, "the breaker is still open: Redis answered nothing")
			require.False(t, probing, "no probe in flight")
			require.Equal(t, until, left, "the same back-off")
			st := b.Stats()
			require.Equal(t, [3]uint64{1, 1, 0}, [3]uint64{st.Admitted, st.Cancelled, st.Failed}, "Admitted, Cancelled, Failed")
			if c.backoff == 0 {
				require.Equal(t, ticket{call: true, probe: true}, brk.begin(), "the next caller probes")
				brk.succeeded(ticket{call: true, probe: true})
			}
		})
	}
}
