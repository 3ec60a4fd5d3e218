package rxthrottle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWindowAllocatesLazily: a huge N costs nothing up front, the ring grows
// with the tokens used, and once N tokens have been used it holds exactly N
// entries of 8 bytes.
func TestWindowAllocatesLazily(t *testing.T) {
	w := newWindow([]Limit{Per(1<<30, time.Hour)})
	require.Zero(t, cap(w.ring), "allocated before any token was used")
	for i := range 1000 {
		w.record(int64(i))
	}
	require.Equal(t, 1024, cap(w.ring))

	w = newWindow([]Limit{Per(1000, time.Hour)})
	for i := range 5000 {
		w.record(int64(i))
	}
	require.Equal(t, 1000, cap(w.ring), "8 bytes per token once all are used")
	require.Equal(t, 1000, w.size)
	e, ok := w.fromEnd(1000)
	require.True(t, ok)
	require.EqualValues(t, 4000, e, "the oldest kept emission")
}

func TestWindowFreeAtSeveralLimits(t *testing.T) {
	ms := int64(time.Millisecond)
	w := newWindow([]Limit{Per(2, 10*time.Millisecond), Per(3, time.Second)})
	require.Equal(t, int64(-1<<63), w.freeAt(0, 1), "a new window is free at any time")
	w.record(0)
	w.record(1 * ms)
	require.Equal(t, 10*ms, w.freeAt(0, 1), "2 per 10ms: the token of 0 renews at 10ms")
	require.Equal(t, int64(never), w.freeAt(2, 1), "two held tokens exhaust 2 per 10ms")
	w.record(10 * ms)
	require.Equal(t, 1000*ms, w.freeAt(0, 1), "3 per 1s: the token of 0 renews at 1s")
	require.Equal(t, 0, w.free(999*ms, 0))
	require.Equal(t, 1, w.free(1000*ms, 0))
	require.Equal(t, 2, w.free(1010*ms, 0))

	// Shrinking at 1010ms keeps the newest N: the others are out of every
	// window, old and new.
	w.setLimits([]Limit{Per(1, time.Second)}, 1010*ms)
	require.Equal(t, 1, w.size)
	require.Equal(t, 1010*ms, w.freeAt(0, 1))
	w.setLimits([]Limit{Per(5, time.Second)}, 1010*ms)
	require.LessOrEqual(t, w.freeAt(0, 1), 1010*ms, "free now: what was dropped is out of the window")
}

func TestWindowRecordStaysSorted(t *testing.T) {
	w := newWindow([]Limit{Per(3, time.Second)})
	w.record(100)
	w.record(50) // a clock set backwards
	e, _ := w.fromEnd(1)
	require.EqualValues(t, 100, e)
}

func TestWindowSaturates(t *testing.T) {
	w := newWindow([]Limit{Per(1, time.Duration(1<<63-1))})
	w.record(10)
	require.Equal(t, int64(never), w.freeAt(0, 1), "no overflow past the int64 range")
}
