package marble

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// longGap is the longest run of idle frames Render writes as dashes; longer
// gaps become a time progression, so a timeline spanning hours renders as
// a short string.
const longGap = 16

// Render returns a canonical marble for tl, with frames of the given
// length: dashes for short gaps, a time progression such as " 1s " for
// long ones, a group for events that share a frame (^ first, ! last).
// Parse(Render(tl)) gives tl back.
//
// Some timelines have no marble: events inside the frames a group takes
// (a group "(ab)" takes four frames, so nothing can happen at its second,
// third or fourth frame), events out of frame order, or a symbol that is
// marble syntax (- | # ^ ! ( ) space) or cannot be seen (see Parse). Render returns an error for those.
func Render(tl Timeline, frame time.Duration) (string, error) {
	if frame <= 0 {
		return "", fmt.Errorf("marble: frame must be positive, got %v", frame)
	}
	s, exact, err := layout(tl, frame, true)
	if err != nil {
		return "", err
	}
	if !exact {
		return "", fmt.Errorf("marble: timeline has events inside the frames of a group; no marble can express it")
	}
	back, err := Parse(s, frame)
	if err != nil || !sameTimeline(back, tl) {
		return "", fmt.Errorf("marble: timeline cannot be written as a marble (rendering %q does not parse back to it)", s)
	}
	return s, nil
}

func sameTimeline(a, b Timeline) bool {
	if len(a.Events) == 0 && len(b.Events) == 0 {
		a.Events, b.Events = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// cell is what happens at one frame: the symbols written there, in order.
type cell struct {
	frame   int64
	symbols []rune
}

// cells groups the timeline by frame: ^ first, then the events in their
// order, then !.
func cells(tl Timeline) ([]cell, error) {
	var out []cell
	add := func(frame int64, r rune) error {
		if frame < 0 {
			return fmt.Errorf("marble: symbol %q at negative frame %d", r, frame)
		}
		if n := len(out); n > 0 && out[n-1].frame == frame {
			out[n-1].symbols = append(out[n-1].symbols, r)
			return nil
		} else if n > 0 && out[n-1].frame > frame {
			return fmt.Errorf("marble: %q at frame %d comes after frame %d: events out of order", r, frame, out[n-1].frame)
		}
		out = append(out, cell{frame: frame, symbols: []rune{r}})
		return nil
	}
	// Merge ^ and ! into the events, which are in frame order.
	sub, unsub := tl.Subscribe != NoFrame, tl.Unsubscribe != NoFrame
	for _, e := range tl.Events {
		if sub && tl.Subscribe <= e.Frame {
			if err := add(tl.Subscribe, '^'); err != nil {
				return nil, err
			}
			sub = false
		}
		if unsub && tl.Unsubscribe < e.Frame {
			if err := add(tl.Unsubscribe, '!'); err != nil {
				return nil, err
			}
			unsub = false
		}
		r, err := symbolOf(e)
		if err != nil {
			return nil, err
		}
		if err := add(e.Frame, r); err != nil {
			return nil, err
		}
	}
	if sub {
		if err := add(tl.Subscribe, '^'); err != nil {
			return nil, err
		}
	}
	if unsub {
		if err := add(tl.Unsubscribe, '!'); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func symbolOf(e Event) (rune, error) {
	switch e.Kind {
	case Complete:
		return '|', nil
	case Error:
		return '#', nil
	case Next:
		if isValue(e.Symbol) {
			return e.Symbol, nil
		}
		return 0, fmt.Errorf("marble: value symbol %q at frame %d is marble syntax or cannot be seen", e.Symbol, e.Frame)
	}
	return 0, fmt.Errorf("marble: unknown event kind %v at frame %d", e.Kind, e.Frame)
}

// layout writes tl as a marble. With progressions, long gaps become time
// progressions; without (for the aligned failure output), every frame is
// one column, so column n is frame n. exact is false when a cell had to be
// drawn later than its frame because a group before it was still open.
func layout(tl Timeline, frame time.Duration, progressions bool) (s string, exact bool, err error) {
	cs, err := cells(tl)
	if err != nil {
		return "", false, err
	}
	w := writer{frame: frame, progressions: progressions}
	exact = true
	col := int64(0)
	for _, c := range cs {
		gap := c.frame - col
		if gap < 0 {
			exact = false
			gap = 0
		}
		w.gap(gap)
		if len(c.symbols) == 1 {
			w.symbol(c.symbols[0])
		} else {
			w.symbol('(')
			for _, r := range c.symbols {
				w.symbol(r)
			}
			w.symbol(')')
		}
		col += gap + int64(len(c.symbols))
		if len(c.symbols) > 1 {
			col += 2
		}
	}
	if tl.End > col {
		w.gap(tl.End - col)
	}
	return w.b.String(), exact, nil
}

// writer builds a marble so that it parses back as written: digits at the
// start or after a space would read as a time progression if a unit
// followed them ("1s", "1.5ms"), so with progressions on, a space (which
// takes no time) goes between them.
type writer struct {
	b            strings.Builder
	frame        time.Duration
	progressions bool
	last         rune
	number       numberState // how the output ends, as the start of a time progression
}

// numberState tracks a number that began where a time progression may
// start: its digits, then a dot, then more digits.
type numberState int

const (
	noNumber numberState = iota
	intDigits
	numberDot
	fracDigits
)

func (w *writer) symbol(r rune) {
	if w.progressions && (w.number == intDigits || w.number == fracDigits) && (r == 'm' || r == 's') {
		w.b.WriteByte(' ')
		w.last = ' '
	}
	switch {
	case isDigit(r) && (w.last == 0 || w.last == ' '):
		w.number = intDigits
	case isDigit(r) && w.number == numberDot:
		w.number = fracDigits
	case isDigit(r) && (w.number == intDigits || w.number == fracDigits):
	case r == '.' && w.number == intDigits:
		w.number = numberDot
	default:
		w.number = noNumber
	}
	w.b.WriteRune(r)
	w.last = r
}

func (w *writer) gap(n int64) {
	if !w.progressions || n <= longGap {
		for ; n > 0; n-- {
			w.symbol('-')
		}
		return
	}
	w.b.WriteByte(' ')
	w.b.WriteString(formatProgression(time.Duration(n) * w.frame))
	w.b.WriteByte(' ')
	w.last, w.number = ' ', noNumber
}

// formatProgression writes d in the largest unit that keeps it exact.
func formatProgression(d time.Duration) string {
	switch {
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	frac := strings.TrimRight(fmt.Sprintf("%06d", d%time.Millisecond), "0")
	return fmt.Sprintf("%d.%sms", d/time.Millisecond, frac)
}
