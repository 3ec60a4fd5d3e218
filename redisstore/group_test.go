package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// queued returns how many admissions wait for the next call of keys.
func queued(b *Bucket) int {
	b.s.group.mu.Lock()
	defer b.s.group.mu.Unlock()
	if f := b.s.group.flights[b.keys[0]]; f != nil {
		return len(f.queue)
	}
	return 0
}

// TestGroupCommit: a caller alone goes at once, in a call of its own; the
// callers that arrive while it is in flight go together in the next call,
// one script run, and each gets its own answer.
func TestGroupCommit(t *testing.T) {
	f := &fakeRedis{block: make(chan struct{})}
	b, err := NewBucket(f, "api", rxthrottle.Per(100, time.Hour))
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, b.Wait(ctx)) })
	require.Eventually(t, func() bool { return f.count() == 1 }, 5*time.Second, time.Millisecond, "the first caller goes at once")
	for range 3 {
		wg.Go(func() { require.NoError(t, b.Wait(ctx)) })
	}
	wg.Go(func() {
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.True(t, ok)
	})
	require.Eventually(t, func() bool { return queued(b) == 4 }, 5*time.Second, time.Millisecond)

	// A caller that gives up while queued is taken out: nothing is sent.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Wait(cctx) }()
	require.Eventually(t, func() bool { return queued(b) == 5 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, recv(t, done), context.Canceled)
	require.Equal(t, 4, queued(b))

	close(f.block)
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, []int{1, 4}, f.batches, "one call for the first caller, one for the four that queued")
	require.Equal(t, uint64(5), b.Stats().Admitted)
	require.Empty(t, b.s.group.flights, "nothing left in flight")
}
