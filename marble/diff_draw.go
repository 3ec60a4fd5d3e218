package marble

import (
	"fmt"
	"strings"
)

func drawWant(want []wantEvent) (string, bool) {
	tl := Timeline{Subscribe: NoFrame, Unsubscribe: NoFrame}
	for _, w := range want {
		tl.Events = append(tl.Events, Event{Frame: w.frame, Kind: w.kind, Symbol: w.symbol})
	}
	return draw(tl)
}

func drawGot(got []gotEvent, values map[string]any) (string, bool) {
	tl := Timeline{Subscribe: NoFrame, Unsubscribe: NoFrame}
	for _, g := range got {
		tl.Events = append(tl.Events, Event{Frame: g.frame, Kind: g.kind, Symbol: symbolFor(g, values)})
	}
	return draw(tl)
}

// draw lays a timeline out one frame per column; it never fails (symbols
// are not checked: ? stands for a value without a letter).
func draw(tl Timeline) (string, bool) {
	var b strings.Builder
	exact := true
	col := int64(0)
	for _, c := range cellsOf(tl) {
		gap := c.frame - col
		if gap < 0 {
			exact, gap = false, 0
		}
		b.WriteString(strings.Repeat("-", int(gap)))
		width := int64(1)
		if len(c.symbols) == 1 {
			b.WriteRune(c.symbols[0])
		} else {
			b.WriteString("(" + string(c.symbols) + ")")
			width = int64(len(c.symbols)) + 2
		}
		col += gap + width
	}
	return b.String(), exact
}

// cellsOf groups events by frame, without the checks of cells.
func cellsOf(tl Timeline) []cell {
	var out []cell
	add := func(frame int64, r rune) {
		if n := len(out); n > 0 && out[n-1].frame == frame {
			out[n-1].symbols = append(out[n-1].symbols, r)
			return
		}
		out = append(out, cell{frame: frame, symbols: []rune{r}})
	}
	sub, unsub := tl.Subscribe != NoFrame, tl.Unsubscribe != NoFrame
	for _, e := range tl.Events {
		if sub && tl.Subscribe <= e.Frame {
			add(tl.Subscribe, '^')
			sub = false
		}
		if unsub && tl.Unsubscribe < e.Frame {
			add(tl.Unsubscribe, '!')
			unsub = false
		}
		r := e.Symbol
		switch e.Kind {
		case Error:
			r = '#'
		case Complete:
			r = '|'
		}
		add(e.Frame, r)
	}
	if sub {
		add(tl.Subscribe, '^')
	}
	if unsub {
		add(tl.Unsubscribe, '!')
	}
	return out
}

// drawPair writes two drawings one above the other and a caret under
// column first, cutting both to one window if they are wide.
func drawPair(b *strings.Builder, name1, line1, name2, line2 string, first int64) {
	r1, r2 := []rune(line1), []rune(line2)
	width := max(len(r1), len(r2))
	start, end := 0, width
	if width > maxWidth {
		start = max(0, int(first)-lead)
		end = min(width, start+maxWidth)
	}
	cut := func(r []rune) string {
		s := ""
		if start > 0 {
			s = "…"
		}
		if start < len(r) {
			s += string(r[start:min(end, len(r))])
		}
		if end < len(r) {
			s += "…"
		}
		return s
	}
	label := max(len(name1), len(name2))
	fmt.Fprintf(b, "  %-*s: %s\n", label, name1, cut(r1))
	fmt.Fprintf(b, "  %-*s: %s\n", label, name2, cut(r2))
	caret := 2 + label + 2 + int(first) - start
	if start > 0 {
		caret++
	}
	fmt.Fprintf(b, "%s^\n", strings.Repeat(" ", caret))
}
