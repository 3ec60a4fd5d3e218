package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestPrioritiesOrderGroupCommit: the callers of one process queued while
// a call is in flight go in the next script run by priority
// (rxthrottle.WithPriority), then in arrival order (SPEC.md,
// "Priorities"); ids are given in the run's order.
func TestPrioritiesOrderGroupCommit(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, s := range []*redis.Script{batchScript, endScript} {
		require.NoError(t, s.Load(ctx, rdb).Err())
	}
	g := &gatedScripter{Client: rdb, gate: make(chan struct{}), entered: make(chan struct{})}
	b, err := NewBucket(g, "prio", rxthrottle.Per(10, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	first := make(chan error, 1)
	go func() { first <- b.Wait(ctx) }()
	<-g.entered
	prios := []int{0, 0, 5, -1, 5}
	toks := make([]chan rxthrottle.Token, len(prios))
	for i, p := range prios {
		toks[i] = make(chan rxthrottle.Token, 1)
		go func() {
			tok, err := b.Acquire(rxthrottle.WithPriority(ctx, p))
			require.NoError(t, err)
			toks[i] <- tok
		}()
		require.Eventually(t, func() bool { return queued(b) == i+1 }, 30*time.Second, time.Millisecond)
	}
	close(g.gate)
	require.NoError(t, recv(t, first))
	ids := make([]string, len(prios))
	for i := range prios {
		select {
		case tok := <-toks[i]:
			ids[i] = tok.String()
			tok.Release()
		case <-time.After(5 * time.Second):
			t.Fatal("no token within 5s")
		}
	}
	// The first call took id 1; the next run: the two of priority 5 in
	// their order, then the two of 0, then -1.
	want := []string{"#4", "#5", "#2", "#6", "#3"}
	for i := range want {
		want[i] = fmt.Sprintf("rxthrottle.Token(%s)", want[i])
	}
	require.Equal(t, want, ids)
}
