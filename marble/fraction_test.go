package marble

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func at(frame int64, offset time.Duration, e Event) Event {
	e.Frame, e.Offset = frame, offset
	return e
}

// A time progression that is not a whole number of frames moves every
// later symbol between frames, as rxjs's parseMarbles does with its real
// frame counter: each symbol after it still takes one frame.
func TestParseFractionalProgression(t *testing.T) {
	tl, err := Parse("a 10.2ms b|", time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, Timeline{
		Events:      []Event{next(0, 'a'), at(11, 200*time.Microsecond, next(0, 'b')), at(12, 200*time.Microsecond, complete(0))},
		Subscribe:   NoFrame,
		Unsubscribe: NoFrame,
		End:         13, EndOffset: 200 * time.Microsecond,
	}, tl)
	assert.Equal(t, 11200*time.Microsecond, tl.Events[1].Time(time.Millisecond))

	// rxjs's own case, with its frames of 10 (ms here): a at 10.2,
	// b at 10.2+10+1200, c a minute and a frame later.
	tl, err = Parse("10.2ms a 1.2s b 1m c|", 10*time.Millisecond)
	require.NoError(t, err)
	var times []time.Duration
	for _, e := range tl.Events {
		times = append(times, e.Time(10*time.Millisecond))
	}
	assert.Equal(t, []time.Duration{10200 * time.Microsecond, 1220200 * time.Microsecond, 61230200 * time.Microsecond, 61240200 * time.Microsecond}, times)

	// Two halves make a whole: b is back on a frame.
	tl, err = Parse("0.5ms a 0.5ms b", time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, []Event{at(0, 500*time.Microsecond, next(0, 'a')), next(2, 'b')}, tl.Events)

	// ^ and ! too, as in parseMarblesAsSubscriptions.
	tl, err = Parse("10.2ms ^ 1.2s - 1m !", 10*time.Millisecond)
	require.NoError(t, err)
	sub, _ := tl.subscribeAt(10 * time.Millisecond)
	unsub, _ := tl.unsubscribeAt(10 * time.Millisecond)
	assert.Equal(t, 10200*time.Microsecond, sub)
	assert.Equal(t, 61230200*time.Microsecond, unsub)

	// Within a group, every symbol is at the group's instant.
	tl, err = Parse("0.25ms (ab)", time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, []Event{at(0, 250*time.Microsecond, next(0, 'a')), at(0, 250*time.Microsecond, next(0, 'b'))}, tl.Events)
}

func TestRenderFractional(t *testing.T) {
	for _, m := range []string{"a 10.2ms b|", " 0.5ms a", "a 0.5ms ", " 0.25ms (ab) 1.5ms |", " 0.5ms ^ 2.5ms !", "a 1.000001ms b"} {
		tl, err := Parse(m, time.Millisecond)
		require.NoError(t, err, m)
		got, err := Render(tl, time.Millisecond)
		require.NoError(t, err, m)
		assert.Equal(t, m, got)
	}
}

// On virtual time an event between frames lands at its exact nanosecond,
// in sources, subscription marbles and expectations alike.
func TestFractionalRun(t *testing.T) {
	Run(t, func(s *Scheduler) {
		cold := s.Cold("a 10.2ms b|", nil)
		s.ExpectObservable(cold).ToBe("a 10.2ms b|", nil)
		s.ExpectObservable(cold, "0.5ms ^").ToBe("0.5ms a 10.2ms b|", nil)
		s.ExpectSubscriptions(cold).ToBe("^ 11.2ms !", "0.5ms ^ 11.2ms !")

		hot := s.Hot("0.3ms ^-a 0.7ms b|", nil)
		s.ExpectObservable(hot).ToBe("--a 0.7ms b|", nil)

		// A pipeline delay that is not a whole number of frames.
		late := s.Cold("a|", nil).Map(func(_ context.Context, v any) (any, error) {
			time.Sleep(2500 * time.Microsecond)
			return v, nil
		})
		s.ExpectObservable(late).ToBe("2.5ms (a|)", nil)
	})
}

func TestDiffFractional(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(s.Cold("a 10.3ms b|", nil)).ToBe("a 10.2ms b|", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "timelines differ at 11.2ms (between frames 11 and 12)\n"+
		"  want: a 10.2ms b|\n"+
		"  got : a 10.3ms b|\n"+
		"             ^\n"+
		"  only in want:\n"+
		"    11.2ms (between frames 11 and 12): b = \"b\"\n"+
		"    12.2ms (between frames 12 and 13): |\n"+
		"  only in got:\n"+
		"    11.3ms (between frames 11 and 12): b = \"b\"\n"+
		"    12.3ms (between frames 12 and 13): |")
}

// Channel sources and expectations keep the fraction too.
func TestFractionalChan(t *testing.T) {
	Run(t, func(s *Scheduler) {
		ExpectChan(s, ColdChan[string](s, "a 0.5ms b 1.25ms |", nil)).ToBe("a 0.5ms b 1.25ms |", nil)
		ExpectChan(s, HotChan[string](s, "0.5ms ^a-🙈|", nil)).ToBe("-a-🙈|", nil)
	})
}
