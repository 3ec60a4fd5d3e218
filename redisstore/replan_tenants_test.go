package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestReplanKeepsTenantOrder: tenant "a"'s first caller goes at once
// (nobody waits: no finish charged), two more of "a" sleep on the next
// windows, then one of "b" arrives. The fair order (SPEC.md, "Fair
// shares") is a2 (finish 1, the earlier of two equal finishes), b1
// (finish 1), a3 (finish 2, computed once a2 is served at V = 1), not the
// arrivals' a2, a3, b1. A SetLimit re-plans all three (their reservations
// withdrawn, asked again in their places), and they still go one window
// each in that order.
func TestReplanKeepsTenantOrder(t *testing.T) {
	clk := newSignalClock()
	s, _ := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk))
	s.s.sleeping = func(time.Duration) {}
	ctx := context.Background()
	a, b := rxthrottle.WithTenant(ctx, "a", 1), rxthrottle.WithTenant(ctx, "b", 1)
	require.NoError(t, s.Wait(a))
	done := map[string]chan error{"a2": make(chan error, 1), "a3": make(chan error, 1), "b1": make(chan error, 1)}
	go func() { done["a2"] <- s.Wait(a) }()
	settled(t, s.s, s.keys[0], 1)
	go func() { done["a3"] <- s.Wait(a) }()
	settled(t, s.s, s.keys[0], 2)
	go func() { done["b1"] <- s.Wait(b) }()
	settled(t, s.s, s.keys[0], 3)

	require.NoError(t, s.SetLimit(rxthrottle.Per(1, 2*time.Hour)))
	settled(t, s.s, s.keys[0], 3)
	for i, who := range []string{"a2", "b1", "a3"} {
		clk.Add(2*time.Hour + time.Minute)
		require.NoError(t, recv(t, done[who]), "window %d: %s goes", i+1, who)
		for other, ch := range done {
			select {
			case err := <-ch:
				t.Fatalf("window %d: %s went (%v) in %s's window", i+1, other, err, who)
			default:
			}
		}
		delete(done, who)
	}
}
