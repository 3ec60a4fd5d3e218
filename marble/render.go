package marble

import (
	"fmt"
	"reflect"
	"time"
)

// Render returns a canonical marble for tl, with frames of the given
// length: dashes for short gaps, a time progression such as " 1s " for
// long ones and for those that are not a whole number of frames
// (" 10.2ms "), a group for events that share an instant (^ first, !
// last). Parse(Render(tl)) gives tl back.
//
// Some timelines have no marble: events inside the frames a group takes
// (a group "(ab)" takes four frames, so nothing can happen at its second,
// third or fourth frame), events out of frame order, or a symbol that is
// marble syntax (- | # ^ ! ( ) space) or cannot be seen (see Parse).
// Render returns an error for those.
func Render(tl Timeline, frame time.Duration) (string, error) {
	if frame <= 0 {
		return "", fmt.Errorf("marble: frame must be positive, got %v", frame)
	}
	s, exact, err := layout(tl, frame)
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

// cell is what happens at one instant: the symbols written there, in
// order.
type cell struct {
	at      time.Duration
	symbols []rune
}

// width returns how many frames c takes in a marble: 1 for a symbol, one
// per symbol and parenthesis for a group.
func (c cell) width() int {
	if len(c.symbols) == 1 {
		return 1
	}
	return len(c.symbols) + 2
}

// cells groups the timeline by instant: ^ first, then the events in
// their order, then !.
func cells(tl Timeline, frame time.Duration) ([]cell, error) {
	var out []cell
	add := func(at time.Duration, r rune) error {
		if at < 0 {
			return fmt.Errorf("marble: symbol %q at negative %s", r, when(at, frame))
		}
		if n := len(out); n > 0 && out[n-1].at == at {
			out[n-1].symbols = append(out[n-1].symbols, r)
			return nil
		} else if n > 0 && out[n-1].at > at {
			return fmt.Errorf("marble: %q at %s comes after %s: events out of order", r, when(at, frame), when(out[n-1].at, frame))
		}
		out = append(out, cell{at: at, symbols: []rune{r}})
		return nil
	}
	// Merge ^ and ! into the events, which are in time order.
	subAt, sub := tl.subscribeAt(frame)
	unsubAt, unsub := tl.unsubscribeAt(frame)
	for _, e := range tl.Events {
		at := e.Time(frame)
		if sub && subAt <= at {
			if err := add(subAt, '^'); err != nil {
				return nil, err
			}
			sub = false
		}
		if unsub && unsubAt < at {
			if err := add(unsubAt, '!'); err != nil {
				return nil, err
			}
			unsub = false
		}
		r, err := symbolOf(e)
		if err != nil {
			return nil, err
		}
		if err := add(at, r); err != nil {
			return nil, err
		}
	}
	if sub {
		if err := add(subAt, '^'); err != nil {
			return nil, err
		}
	}
	if unsub {
		if err := add(unsubAt, '!'); err != nil {
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

// layout writes tl as a marble: short gaps as dashes, long ones and
// those that are not whole frames as time progressions. exact is false
// when a cell had to be written later than its instant because a group
// before it was still open.
func layout(tl Timeline, frame time.Duration) (s string, exact bool, err error) {
	cs, err := cells(tl, frame)
	if err != nil {
		return "", false, err
	}
	w := writer{frame: frame}
	exact = true
	pos := time.Duration(0)
	for _, c := range cs {
		gap := c.at - pos
		if gap < 0 {
			exact, gap = false, 0
		}
		w.gap(gap)
		w.cell(c.symbols)
		pos += gap + time.Duration(c.width())*frame
	}
	if end := tl.endAt(frame); end > pos {
		w.gap(end - pos)
	}
	return w.b.String(), exact, nil
}
