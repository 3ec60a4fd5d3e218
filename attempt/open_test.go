package attempt_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/attempt"
)

func TestGoOutcome(t *testing.T) {
	exited := errors.New("exited")
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		f    func() (int, error)
		want attempt.Outcome[int]
	}{
		{"a value", func() (int, error) { return 7, nil }, attempt.Outcome[int]{Value: 7}},
		{"an error", func() (int, error) { return 0, boom }, attempt.Outcome[int]{Err: boom}},
		{"a panic", func() (int, error) { panic("p") }, attempt.Outcome[int]{Panicked: "p"}},
		{"a panic with nil", func() (int, error) { panic(nil) }, attempt.Outcome[int]{Panicked: new(runtime.PanicNilError)}},
		{"runtime.Goexit", func() (int, error) { runtime.Goexit(); return 1, nil }, attempt.Outcome[int]{Panicked: exited}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := attempt.Go(tc.f, exited)
			require.Equal(t, tc.want, <-done)
			select {
			case r := <-done:
				t.Fatalf("a second outcome: %+v", r)
			default:
			}
		})
	}
}

func TestKeptOpenCap(t *testing.T) {
	var k attempt.KeptOpen
	require.True(t, k.Keep(2))
	require.True(t, k.Keep(2))
	require.False(t, k.Keep(2), "the cap is taken")
	require.EqualValues(t, 2, k.Now(), "a refused Keep takes no place")
	k.Done()
	require.True(t, k.Keep(2), "a place given back is free again")
	require.False(t, k.Keep(0), "a cap of 0 keeps none")
	require.EqualValues(t, 2, k.Now())
}
