package marble

import (
	"fmt"
	"strings"
	"time"
)

// writer builds a marble so that it parses back as written: digits at the
// start or after a space would read as a time progression if a unit
// followed them ("1s", "1.5ms"), so with progressions on, a space (which
// takes no time) goes between them.
type writer struct {
	b      strings.Builder
	frame  time.Duration
	last   rune
	cols   int         // runes written
	number numberState // how the output ends, as the start of a time progression
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
	if (w.number == intDigits || w.number == fracDigits) && (r == 'm' || r == 's') {
		w.space()
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
	w.cols++
}

// cell writes the symbols of one instant: a symbol, or a group.
func (w *writer) cell(symbols []rune) {
	if len(symbols) == 1 {
		w.symbol(symbols[0])
		return
	}
	w.symbol('(')
	for _, r := range symbols {
		w.symbol(r)
	}
	w.symbol(')')
}

func (w *writer) space() {
	w.b.WriteByte(' ')
	w.last, w.number = ' ', noNumber
	w.cols++
}

// gap writes d of idle time: dashes for a few whole frames, a time
// progression (" 20ms ", " 10.2ms ") for more, or for a duration that is
// not a whole number of frames.
func (w *writer) gap(d time.Duration) {
	if d%w.frame == 0 && d/w.frame <= longGap {
		for n := d / w.frame; n > 0; n-- {
			w.symbol('-')
		}
		return
	}
	text := formatProgression(d)
	w.space()
	w.b.WriteString(text)
	w.cols += len(text)
	w.space()
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

// longGap is the longest run of idle frames Render writes as dashes; longer
// gaps become a time progression, so a timeline spanning hours renders as
// a short string.
const longGap = 16
