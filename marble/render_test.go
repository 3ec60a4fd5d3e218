package marble

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	tests := []struct{ marble, want string }{
		{"", ""},
		{"-a-b|", "-a-b|"},
		{"  a  b  ", "ab"},
		{"(ab)c--", "(ab)c--"},
		{"-(a|)", "-(a|)"},
		{"--^--a", "--^--a"},
		{"(^!)", "(^!)"},
		{"(!^)", "(^!)"},
		{"a 9ms b", "a---------b"},
		{"a 99ms b", "a 99ms b"},
		{"a 1s 1", "a 1s 1"},
		{"1 m", "1 m"},
		{"0 s0", "0 s0"},
		{"a 1s 12 ms", "a 1s 12 ms"},
		{"2m |", " 2m |"},
		{"1.5s a", " 1500ms a"},
		{"a 20ms ", "a 20ms "},
		{"--🙈--🙉--|", "--🙈--🙉--|"},
		{"1.5 s 1s 1.5 ms", "1.5 s 1s 1.5 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.marble, func(t *testing.T) {
			tl, err := Parse(tt.marble, time.Millisecond)
			require.NoError(t, err)
			got, err := Render(tl, time.Millisecond)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			back, err := Parse(got, time.Millisecond)
			require.NoError(t, err)
			assert.True(t, sameTimeline(tl, back), "Parse(%q) = %+v, want %+v", got, back, tl)
		})
	}
}

func TestRenderFractionalProgression(t *testing.T) {
	tl := Timeline{Events: []Event{next(0, 'a'), next(1001, 'b')}, Subscribe: NoFrame, Unsubscribe: NoFrame, End: 1002}
	got, err := Render(tl, 10*time.Microsecond)
	require.NoError(t, err)
	assert.Equal(t, "a 10ms b", got)
	got, err = Render(tl, 7*time.Microsecond)
	require.NoError(t, err)
	assert.Equal(t, "a 7ms b", got)
	tl.Events[1].Frame, tl.End = 21, 22
	got, err = Render(tl, 7*time.Microsecond)
	require.NoError(t, err)
	assert.Equal(t, "a 0.14ms b", got)
}

func TestRenderErrors(t *testing.T) {
	base := Timeline{Subscribe: NoFrame, Unsubscribe: NoFrame}
	tests := []struct {
		name   string
		events []Event
		want   string
	}{
		{"inside group", []Event{next(0, 'a'), next(0, 'b'), next(1, 'c')}, "marble: timeline has events inside the frames of a group; no marble can express it"},
		{"out of order", []Event{next(3, 'a'), next(1, 'b')}, "marble: 'b' at frame 1 comes after frame 3: events out of order"},
		{"syntax symbol", []Event{next(0, '-')}, "marble: value symbol '-' at frame 0 is marble syntax or cannot be seen"},
		{"invisible symbol", []Event{next(0, '\u200d')}, "marble: value symbol '\\u200d' at frame 0 is marble syntax or cannot be seen"},
		{"negative", []Event{next(-1, 'a')}, "marble: symbol 'a' at negative frame -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := base
			tl.Events = tt.events
			_, err := Render(tl, time.Millisecond)
			assert.EqualError(t, err, tt.want)
		})
	}
	_, err := Render(base, 0)
	assert.EqualError(t, err, "marble: frame must be positive, got 0s")
}
