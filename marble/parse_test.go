package marble

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func next(frame int64, r rune) Event { return Event{Frame: frame, Kind: Next, Symbol: r} }
func complete(frame int64) Event     { return Event{Frame: frame, Kind: Complete} }
func fail(frame int64) Event         { return Event{Frame: frame, Kind: Error} }

func TestParse(t *testing.T) {
	tests := []struct {
		marble      string
		events      []Event
		sub, unsub  int64
		end         int64
		frameLength time.Duration
	}{
		{marble: "", end: 0},
		{marble: "-", end: 1},
		{marble: "a", events: []Event{next(0, 'a')}, end: 1},
		{marble: "-a-b|", events: []Event{next(1, 'a'), next(3, 'b'), complete(4)}, end: 5},
		{marble: "--#", events: []Event{fail(2)}, end: 3},
		{marble: "Z9", events: []Event{next(0, 'Z'), next(1, '9')}, end: 2},
		// A group is at the frame of its (, and every character of it
		// counts a frame, as in rxjs: "(ab)" takes four.
		{marble: "(ab)c", events: []Event{next(0, 'a'), next(0, 'b'), next(4, 'c')}, end: 5},
		{marble: "-(a|)", events: []Event{next(1, 'a'), complete(1)}, end: 5},
		{marble: "(a#)", events: []Event{next(0, 'a'), fail(0)}, end: 4},
		{marble: "--^--a", events: []Event{next(5, 'a')}, sub: 2, end: 6},
		{marble: "^--!", sub: 0, unsub: 3, end: 4},
		{marble: "(^!)", sub: 0, unsub: 0, end: 4},
		{marble: "--!", unsub: 2, end: 3},
		// Spaces take no time.
		{marble: "  a  b  ", events: []Event{next(0, 'a'), next(1, 'b')}, end: 2},
		{marble: "( a b )", events: []Event{next(0, 'a'), next(0, 'b')}, end: 4},
		// Time progressions: a value takes a frame, the progression adds
		// its length, as rxjs's "a 9ms b" puts b at frame 10.
		{marble: "a 9ms b", events: []Event{next(0, 'a'), next(10, 'b')}, end: 11},
		{marble: "10ms a", events: []Event{next(10, 'a')}, end: 11},
		{marble: "1.5s |", events: []Event{complete(1500)}, end: 1501},
		{marble: "2m a", events: []Event{next(120000, 'a')}, end: 120001},
		{marble: "a 1s b", frameLength: 10 * time.Millisecond, events: []Event{next(0, 'a'), next(101, 'b')}, end: 102},
		{marble: "0ms a", events: []Event{next(0, 'a')}, end: 1},
		// Digits not followed by a unit, or not at the start or after a
		// space, are values.
		{marble: "12 3", events: []Event{next(0, '1'), next(1, '2'), next(2, '3')}, end: 3},
		{marble: "a1ms", events: []Event{next(0, 'a'), next(1, '1'), next(2, 'm'), next(3, 's')}, end: 4},
		// Any rune that is not syntax is a value, as in rxjs: emoji,
		// accented letters, punctuation, a digit and a dot that are not a
		// time progression, a literal U+FFFD.
		{marble: "--🙈--🙉--|", events: []Event{next(2, '🙈'), next(5, '🙉'), complete(8)}, end: 9},
		{marble: "é*.?", events: []Event{next(0, 'é'), next(1, '*'), next(2, '.'), next(3, '?')}, end: 4},
		{marble: "1.a", events: []Event{next(0, '1'), next(1, '.'), next(2, 'a')}, end: 3},
		{marble: "(🙈🙉)x", events: []Event{next(0, '🙈'), next(0, '🙉'), next(4, 'x')}, end: 5},
		{marble: "日本\ufffd", events: []Event{next(0, '日'), next(1, '本'), next(2, '\ufffd')}, end: 3},
	}
	for _, tt := range tests {
		frame := tt.frameLength
		if frame == 0 {
			frame = time.Millisecond
		}
		t.Run(tt.marble, func(t *testing.T) {
			tl, err := Parse(tt.marble, frame)
			require.NoError(t, err)
			sub, unsub := tt.sub, tt.unsub
			if sub == 0 && !containsRune(tt.marble, '^') {
				sub = NoFrame
			}
			if unsub == 0 && !containsRune(tt.marble, '!') {
				unsub = NoFrame
			}
			assert.Equal(t, Timeline{Events: tt.events, Subscribe: sub, Unsubscribe: unsub, End: tt.end}, tl)
		})
	}
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ marble, want string }{
		{"a-(b-c|", `marble: "a-(b-c|": unclosed group at column 3`},
		{"a-(b)-c)", `marble: "a-(b)-c)": unbalanced ) without a group to close at column 8`},
		{"((a))", `marble: "((a))": nested group (a group is one frame; it cannot hold another) at column 2`},
		{"-()", `marble: "-()": empty group at column 2`},
		{"(a-b)", `marble: "(a-b)": - inside a group (a group is a single frame) at column 3`},
		{"a\tb", `marble: "a\tb": whitespace '\t' other than a space (only spaces align marbles) at column 2`},
		{"a\u00a0b", `marble: "a\u00a0b": whitespace '\u00a0' other than a space (only spaces align marbles) at column 2`},
		{"a\x00", `marble: "a\x00": control character U+0000 at column 2`},
		{"-\u2764\ufe0f-|", `marble: "-❤\ufe0f-|": invisible rune U+FE0F (a combining mark, a joiner or a variation selector; a value is one rune, and an emoji written with such runes is several) at column 3`},
		{"\U0001F469\u200d\U0001F4BB", `marble: "👩\u200d💻": invisible rune U+200D (a combining mark, a joiner or a variation selector; a value is one rune, and an emoji written with such runes is several) at column 2`},
		{"e\u0301", `marble: "e\u0301": invisible rune U+0301 (a combining mark, a joiner or a variation selector; a value is one rune, and an emoji written with such runes is several) at column 2`},
		{"^-^", `marble: "^-^": second ^ (a marble has at most one subscription point) at column 3`},
		{"!-!", `marble: "!-!": second ! (a marble has at most one unsubscription) at column 3`},
		{"-!-^", `marble: "-!-^": ! before ^ (unsubscribed before subscribing) at column 2`},
		{"a|b", `marble: "a|b": 'b' after completion | at column 3`},
		{"a#|", `marble: "a#|": '|' after error # at column 3`},
		{"(a|b)", `marble: "(a|b)": 'b' after completion | at column 4`},
		{"a 10ms", `marble: "a 10ms": time progression "10ms" needs a trailing space at column 3`},
		{"10msa", `marble: "10msa": time progression "10ms" needs a trailing space at column 1`},
		{"(a 1s )", `marble: "(a 1s )": time progression "1s" inside a group at column 4`},
		{"0.0000001ms a", `marble: "0.0000001ms a": time progression "0.0000001ms" is not a whole number of nanoseconds at column 1`},
		{"9999999999999999m a", `marble: "9999999999999999m a": time progression "9999999999999999m" out of range at column 1`},
		{"a\xffb", `marble: "a\xffb": invalid UTF-8 at column 2`},
		{"🙈-\xff", `marble: "🙈-\xff": invalid UTF-8 at column 3`},
	}
	for _, tt := range tests {
		t.Run(tt.marble, func(t *testing.T) {
			_, err := Parse(tt.marble, time.Millisecond)
			require.Error(t, err)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, err.Error())
		})
	}
	_, err := Parse("a", 0)
	assert.EqualError(t, err, "marble: frame must be positive, got 0s")
}
