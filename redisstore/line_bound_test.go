package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// TestLineRefusedCallerLeavesTheHead: a caller that WithMaxQueue's bound
// refuses never joins the line, not even for an instant: with the head,
// of priority 0, sleeping between its asks and counted among the callers
// waiting (bound 1 reached), a caller of priority 5 is refused, and the
// head keeps its turn and its sleep (its idle channel stays open: no early
// ask of Redis). Joining first and deciding after, as the line did before
// the count moved into it, closed the head's idle channel and gave the
// refused caller the turn for a moment.
func TestLineRefusedCallerLeavesTheHead(t *testing.T) {
	var l lines
	head := l.join("k", fairq.Caller{Cost: 1})
	require.True(t, isClosed(l.turn(head)), "the first caller in line is its head")
	l.addWaiting("k", 1) // the head waits (OnWait heard of it)
	idle := l.sleeping("k", head)
	require.NotNil(t, idle)

	my, full, refused := l.arrive("k", fairq.Caller{Prio: 5, Cost: 1}, 1, false)
	require.True(t, refused, "the bound of 1 is reached")
	require.True(t, full)
	require.Nil(t, my)
	require.False(t, isClosed(idle), "the refused caller woke the sleeping head")
	require.Equal(t, 1, l.len("k"), "the refused caller is in line")
	l.mu.Lock()
	require.Same(t, head, l.m["k"].head, "the head lost its turn")
	l.mu.Unlock()

	// Under the bound, the same caller queues and takes the head's turn
	// (the priority rule), waking it.
	my, full, refused = l.arrive("k", fairq.Caller{Prio: 5, Cost: 1}, 2, false)
	require.False(t, refused)
	require.False(t, full)
	require.NotNil(t, my)
	require.True(t, isClosed(idle), "a caller of higher priority did not wake the sleeping head")
	require.True(t, isClosed(l.turn(my)))
	l.leave("k", my)
	l.leave("k", head)
	l.addWaiting("k", -1)
	require.Zero(t, l.len("k"))
	require.Zero(t, l.waiting("k"))
	l.mu.Lock()
	require.Empty(t, l.m, "a line that keeps nothing is forgotten")
	l.mu.Unlock()
}
