package marble

import (
	"context"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHigherOrderObservable(t *testing.T) {
	// A pipeline that emits observables: each is subscribed when it is
	// emitted and compared, in time from then, with the Cold given as
	// the value, as in rxjs.
	Run(t, func(s *Scheduler) {
		inner := map[any]rxgo.Observable{"a": s.Cold("-1-2|", nil), "b": s.Cold("--3#", nil)}
		out := s.Cold("a--b|", nil).Map(func(_ context.Context, v any) (any, error) { return inner[v], nil })
		s.ExpectObservable(out).ToBe("x--y|", map[string]any{
			"x": s.Cold("-1-2|", nil),
			"y": s.Cold("--3#", nil),
		})
	})
	msgs := runFake(t, func(s *Scheduler) {
		x := s.Cold("-a-b|", nil)
		s.ExpectObservable(s.Hot("--x|", map[string]any{"x": x})).ToBe("--x|", map[string]any{"x": s.Cold("-a--b|", nil)})
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], `only in want:
    frame 2: x = cold{1: "a", 4: "b", 5: |}`)
	assert.Contains(t, msgs[0], `only in got:
    frame 2: ? = cold{1: "a", 3: "b", 4: |}`)
}

func TestHigherOrderHotValueIsNotMaterialized(t *testing.T) {
	// rxjs materializes only cold observables among the expected values;
	// a hot one is compared as it is, and fails against what was emitted.
	msgs := runFake(t, func(s *Scheduler) {
		h := s.Hot("-a|", nil)
		s.ExpectObservable(s.Cold("x|", map[string]any{"x": h})).ToBe("x|", map[string]any{"x": h})
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "timelines differ at frame 0")
}
