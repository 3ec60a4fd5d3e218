package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// TestLineRefusedCallerLeavesTheHead: a caller that WithMaxQueue's bound
// refuses never joins the line, not even for an instant: with the head,
// of priority 0, sleeping between its asks and counted waiting by its
// schedule's window (bound 1 reached), a caller of priority 5 is refused,
// and the head keeps its turn and its sleep (its idle channel stays open:
// no early ask of Redis). Joining first and deciding after, as the line
// did before the count moved into it, closed the head's idle channel and
// gave the refused caller the turn for a moment. Under the bound the same
// caller joins the line (counted waiting, OnWait told, on its own
// goroutine once the lock is released) and takes the head's turn; once
// both are done the window and the line keep nothing.
func TestLineRefusedCallerLeavesTheHead(t *testing.T) {
	var told []int
	s := &schedule{queueBound: 1}
	s.hooks.onWait = func(ev rxthrottle.Event) { told = append(told, ev.N) }
	caller := func(prio, n int) *taker {
		return &taker{s: s, ask: ask{keys: []string{"k"}, key: "k", n: n}, who: fairq.Caller{Prio: prio, Cost: n}}
	}
	head := caller(0, 1)
	head.my = s.lines.join("k", head.who)
	require.True(t, isClosed(s.lines.turn(head.my)), "the first caller in line is its head")
	head.waits() // blocked by held tokens: the head waits
	require.Equal(t, []int{1}, told)
	idle := s.lines.sleeping("k", head.my)
	require.NotNil(t, idle)

	c := caller(5, 2)
	require.True(t, c.arrive(), "the bound of 1 is reached")
	require.Nil(t, c.my)
	require.False(t, c.asker.Waits(), "a refused caller counts waiting")
	require.False(t, isClosed(idle), "the refused caller woke the sleeping head")
	require.Equal(t, 1, s.lines.len("k"), "the refused caller is in line")
	s.lines.mu.Lock()
	require.Same(t, head.my, s.lines.m["k"].head, "the head lost its turn")
	s.lines.mu.Unlock()
	require.Equal(t, []int{1}, told, "OnWait heard of a refused caller")

	// Under the bound, the same caller queues and takes the head's turn
	// (the priority rule), waking it.
	s.queueBound = 2
	c = caller(5, 2)
	require.False(t, c.arrive())
	require.NotNil(t, c.my)
	require.True(t, c.blocked)
	require.True(t, c.asker.Waits())
	require.Equal(t, []int{1, 2}, told)
	require.Equal(t, 2, s.group.windows["k"].front.Waiters())
	require.True(t, isClosed(idle), "a caller of higher priority did not wake the sleeping head")
	require.True(t, isClosed(s.lines.turn(c.my)))

	// At the bound, a caller with nobody in line asks Redis, only for an
	// admission at once.
	c.leave()
	head.leave()
	require.Zero(t, s.lines.len("k"))
	d := caller(0, 1)
	require.False(t, d.arrive())
	require.Nil(t, d.my)
	require.True(t, d.req.allowOnly, "at the bound, a caller asks for more than an admission at once")

	c.done()
	head.done()
	require.Empty(t, s.group.windows, "a window that keeps nothing is kept")
	s.lines.mu.Lock()
	require.Empty(t, s.lines.m, "a line that keeps nothing is kept")
	s.lines.mu.Unlock()
}
