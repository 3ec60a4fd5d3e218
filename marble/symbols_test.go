package marble

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Any rune that is not syntax is a value, as in rxjs, emoji included; the
// values map is keyed by the rune's string.
func TestAnyRuneIsAValue(t *testing.T) {
	Run(t, func(s *Scheduler) {
		values := map[string]any{"🙈": 1, "🙉": 2, "é": 3, "*": 4}
		s.ExpectObservable(s.Cold("--🙈--🙉--|", values)).ToBe("--🙈--🙉--|", values)
		s.ExpectObservable(s.Cold("é-*|", values)).ToBe("é-*|", values)
		// Without a values map each rune stands for itself.
		s.ExpectObservable(s.Cold("(🙈🙉).|", nil)).ToBe("(xy)z|", map[string]any{"x": "🙈", "y": "🙉", "z": "."})
	})
}

// The failure output keeps the columns of both timelines one above the
// other when a line holds runes a terminal draws two cells wide.
func TestDiffWideRunes(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		src := s.Cold("--🙈---🙉-|", nil)
		s.ExpectObservable(src).ToBe("--🙈--🙉--|", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "timelines differ at frame 5\n"+
		"  want: --🙈--🙉- -|\n"+
		"  got : --🙈--- 🙉-|\n"+
		"              ^\n"+
		"  only in want:\n    frame 5: 🙉 = \"🙉\"\n"+
		"  only in got:\n    frame 6: 🙉 = \"🙉\"")
	msgs = runFake(t, func(s *Scheduler) {
		src := s.Cold("--a--b|", nil)
		s.ExpectObservable(src).ToBe("--日--b-|", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "timelines differ at frame 2\n"+
		"  want: --日--b-|\n"+
		"  got : --a --b|\n"+
		"          ^\n")
}

func TestValuesKeyOfSeveralRunes(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		s.Cold("-❤|", map[string]any{"❤\ufe0f": 1})
	})
	require.Len(t, msgs, 1)
	assert.Equal(t, `fatal: marble: "-❤|": value "❤" missing from the values map (its key "❤\ufe0f" is 2 runes; a key is one rune, as each rune of a marble is one value) at column 2`, msgs[0])
}
