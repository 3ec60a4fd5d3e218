package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// newBarePool returns a pool with no schedule behind it, for tests of its
// order alone: its flush timer, armed when tokens are left, fires in an
// hour, after the test.
func newBarePool() *leasePool {
	p := &leasePool{every: time.Hour}
	p.waiters.p = p
	return p
}

// pushWaiter queues a caller of n tokens waiting for a lease in p.
func pushWaiter(p *leasePool, n int) *front.Waiter {
	w := front.NewWaiter(0, n, 0, fairq.Caller{Cost: n})
	p.waiters.front.Push(w)
	return w
}

// tokensOf returns the indexes in their lease of the tokens granted to w.
func tokensOf(p *leasePool, w *front.Waiter) []int {
	var js []int
	for _, t := range p.takeGrantedLocked(w) {
		js = append(js, t.j)
	}
	return js
}

// TestLeasePoolServesBehindAGiveUp: a caller waiting in the pool behind a
// costlier one goes at once when that one gives up, if the tokens in the
// pool cover its cost (SPEC.md, "Weights": the callers behind are
// scheduled as if it had never arrived), with those tokens, not at the
// next lease's grant; and so it does when the one ahead gives back the
// tokens handed to it (its context ended as they came). While a caller
// of the process is on the normal path, the pool's waiters stay behind
// it. The pool used to hand its tokens out only at a grant or when the
// normal path was done, so the callers behind waited for the next lease
// (and for ever, if none was in flight) although the pool covered them.
func TestLeasePoolServesBehindAGiveUp(t *testing.T) {
	l := &lease{id: 1}
	tokens := func(n int) []leasedToken {
		var ts []leasedToken
		for j := 1; j <= n; j++ {
			ts = append(ts, leasedToken{l, j})
		}
		return ts
	}
	t.Run("withdrawn", func(t *testing.T) {
		p := newBarePool()
		big, small := pushWaiter(p, 3), pushWaiter(p, 1)
		p.avail = tokens(2)
		require.False(t, p.handOutLocked(), "3 tokens asked, 2 in the pool")
		require.Nil(t, tokensOf(p, small), "behind the costlier caller")
		p.gaveUpLocked(big, context.Canceled)
		require.True(t, isClosed(small.Ready), "served once the costlier caller gave up")
		require.Equal(t, []int{1}, tokensOf(p, small))
		require.Len(t, p.avail, 1)
		require.Zero(t, p.waiters.len())
	})
	t.Run("given back", func(t *testing.T) {
		p := newBarePool()
		first, second := pushWaiter(p, 2), pushWaiter(p, 2)
		p.avail = tokens(3)
		require.False(t, p.handOutLocked(), "2 + 2 tokens asked, 3 in the pool")
		require.Equal(t, front.Granted, first.State)
		// first's context ends as its tokens come: they go back first.
		p.gaveUpLocked(first, context.Canceled)
		require.True(t, isClosed(second.Ready), "served from the tokens given back")
		require.Equal(t, []int{1, 2}, tokensOf(p, second))
		require.Equal(t, []leasedToken{{l, 3}}, p.avail)
	})
	t.Run("behind the normal path", func(t *testing.T) {
		p := newBarePool()
		normal := &front.Waiter{N: 1, Kind: leaseNormal, Who: fairq.Caller{Cost: 1}}
		p.waiters.front.Push(normal)
		p.normal++
		big, small := pushWaiter(p, 3), pushWaiter(p, 1)
		p.avail = tokens(2)
		p.gaveUpLocked(big, context.Canceled)
		require.False(t, isClosed(small.Ready), "it waits behind the caller on the normal path")
		require.Len(t, p.avail, 2)
	})
}
