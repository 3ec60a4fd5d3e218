package learn

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLearnProbeRefound: at a refusal while a rate found from 429s is
// spread, what the server accepted in the window before sets the rate
// anew only when it says something: fewer than the rate found, over at
// least half a window since the rate was found, and at most halving it.
func TestLearnProbeRefound(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	found := func(n int) *learnSchedule {
		s := &learnSchedule{}
		s.probe = probeState{phase: probeFound, n: n, w: time.Second, pauseEnd: t0}
		s.spread = spreadState{on: true, f: counterShare(int64(n)), fmax: maxFoundShare, changed: t0, pauseEnd: t0}
		return s
	}
	accept := func(s *learnSchedule, k int, from, every time.Duration) time.Time {
		at := t0.Add(from)
		for range k {
			s.onResponseLocked(false, at, at, time.Second, time.Millisecond, time.Millisecond)
			at = at.Add(every)
		}
		return at
	}
	refuse := func(s *learnSchedule, at time.Time) {
		s.onResponseLocked(true, at, at.Add(time.Second), time.Second, time.Millisecond, time.Millisecond)
	}
	cut := func(n int) float64 { return counterShare(int64(n)) * 0.95 }

	t.Run("found too high", func(t *testing.T) {
		s := found(12) // a run-up across a fixed window's boundary
		refuse(s, accept(s, 10, 90*time.Millisecond, 89*time.Millisecond))
		require.Equal(t, 10, s.probe.n)
		require.Equal(t, counterShare(10), s.spread.f)
	})
	t.Run("quota fell by more than half", func(t *testing.T) {
		s := found(10)
		at := accept(s, 20, 0, 100*time.Millisecond)
		refuse(s, accept(s, 2, at.Sub(t0)+500*time.Millisecond, 300*time.Millisecond))
		require.Equal(t, 5, s.probe.n, "halved at most")
	})
	t.Run("refused spread evenly below the rate found", func(t *testing.T) {
		s := found(11) // a sliding-window counter's estimate let 11 through
		at := accept(s, 30, 0, 97*time.Millisecond)
		refuse(s, at)
		require.Equal(t, 10, s.probe.n, "what a window accepted")
		require.Equal(t, counterShare(10), s.spread.f)
	})
	t.Run("refused at the edge", func(t *testing.T) {
		s := found(10)
		at := accept(s, 30, 0, 95*time.Millisecond) // the rate found accepted in the window
		f := s.spread.f                             // risen meanwhile
		refuse(s, at)
		require.Equal(t, 10, s.probe.n)
		require.InDelta(t, f*0.95, s.spread.f, 1e-12, "a 5% cut")
	})
	t.Run("first request after the pause refused", func(t *testing.T) {
		s := found(10)
		refuse(s, t0.Add(time.Millisecond))
		require.Equal(t, 10, s.probe.n, "nothing accepted: nothing to go by")
		require.InDelta(t, cut(10), s.spread.f, 1e-12)
	})
	t.Run("less than half a window seen", func(t *testing.T) {
		s := found(10)
		refuse(s, accept(s, 2, 0, 100*time.Millisecond))
		require.Equal(t, 10, s.probe.n)
		require.InDelta(t, cut(10), s.spread.f, 1e-12)
	})
	t.Run("the ring no longer reaches back", func(t *testing.T) {
		s := found(2000)
		refuse(s, accept(s, maxRecentAccepts+10, 0, 500*time.Microsecond))
		require.Equal(t, 2000, s.probe.n, "a rate beyond the ring is cut, never found anew")
	})
}
