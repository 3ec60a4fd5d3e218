package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestConcurrencyAcrossProcesses (SPEC.md, "Concurrency"): with
// rxthrottle.WithConcurrency(2), at most two holds are open at once across
// every process sharing the bucket: a third Acquire, here or in another
// process, waits until one is released (at once for this process's
// callers, at the poll interval for another's), while Wait and Allow,
// never held, are not bound by the cap. A cap counts calls, not tokens.
func TestConcurrencyAcrossProcesses(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	opts := []Option{rxthrottle.WithConcurrency(2), WithPollInterval(5 * time.Millisecond), WithTimeout(suiteTimeout)}
	b, err := NewBucket(srv.Client(t), "conc", rxthrottle.Per(100, time.Hour), opts...)
	require.NoError(t, err)
	other, err := NewBucket(srv.Client(t), "conc", rxthrottle.Per(100, time.Hour), opts...)
	require.NoError(t, err)

	a, err := b.AcquireN(ctx, 3) // one hold of three tokens
	require.NoError(t, err)
	c, err := other.Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, b.Wait(ctx), "a Wait is never held: the cap does not bind it")
	ok, err := other.Allow(ctx)
	require.NoError(t, err)
	require.True(t, ok)

	here, there := make(chan rxthrottle.Token, 1), make(chan rxthrottle.Token, 1)
	go func() {
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		here <- tok
	}()
	require.Eventually(t, func() bool { return lineLen(b) == 1 }, 30*time.Second, time.Millisecond, "blocked by the cap")
	select {
	case <-here:
		t.Fatal("a third hold opened")
	case <-time.After(50 * time.Millisecond):
	}
	a.Release()
	var third rxthrottle.Token
	select {
	case third = <-here:
	case <-time.After(5 * time.Second):
		t.Fatal("the released slot was not taken")
	}
	go func() {
		tok, err := other.Acquire(ctx)
		require.NoError(t, err)
		there <- tok
	}()
	select {
	case <-there:
		t.Fatal("a third hold opened in the other process")
	case <-time.After(50 * time.Millisecond):
	}
	third.Cancel()
	select {
	case tok := <-there:
		tok.Release()
	case <-time.After(5 * time.Second):
		t.Fatal("the other process never took the freed slot")
	}
	c.Release()
}

// TestConcurrencyLeaseEndsHold: a hold whose lease deadline passes frees
// its slot, as a release does, and not before. The time is measured from
// before the first Acquire: Redis stamps that hold no earlier, so the
// second can open no earlier than 50 ms after it on any machine (measured
// from the first call's return, a loaded machine that delivers the answer
// late makes the wait look short: CI saw 31 ms).
func TestConcurrencyLeaseEndsHold(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(100, time.Hour), rxthrottle.WithConcurrency(1), WithHoldTimeout(50*time.Millisecond))
	ctx := context.Background()
	start := time.Now()
	_, err := b.Acquire(ctx) // never released
	require.NoError(t, err)
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	// Redis's clock counts whole microseconds: allow for one.
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond-time.Microsecond, "the second hold waited for the first's lease")
	tok.Release()
}
