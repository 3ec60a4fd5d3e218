package marble

import (
	"fmt"
	"sort"
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
// column first (a column is a rune: one frame), cutting both to one
// window if they are wide. A rune that a terminal shows two cells wide (an
// emoji, a CJK character) gets a space after the rune of the other line
// in its column, so that the columns stay one above the other.
func drawPair(b *strings.Builder, name1, line1, name2, line2 string, first int64) {
	r1, r2 := []rune(line1), []rune(line2)
	width := max(len(r1), len(r2))
	start, end := 0, width
	if width > maxWidth {
		start = max(0, int(first)-lead)
		end = min(width, start+maxWidth)
	}
	var l1, l2 strings.Builder
	caret := 0
	if start > 0 {
		l1.WriteString("…")
		l2.WriteString("…")
		caret++
	}
	for col := start; col < end; col++ {
		w := max(cellWidth(r1, col), cellWidth(r2, col))
		writeCell(&l1, r1, col, w)
		writeCell(&l2, r2, col, w)
		if int64(col) < first {
			caret += w
		}
	}
	if end < len(r1) {
		l1.WriteString("…")
	}
	if end < len(r2) {
		l2.WriteString("…")
	}
	label := max(len(name1), len(name2))
	fmt.Fprintf(b, "  %-*s: %s\n", label, name1, strings.TrimRight(l1.String(), " "))
	fmt.Fprintf(b, "  %-*s: %s\n", label, name2, strings.TrimRight(l2.String(), " "))
	fmt.Fprintf(b, "%s^\n", strings.Repeat(" ", 2+label+2+caret))
}

// cellWidth returns how many terminal cells column col of line takes: 0
// past its end.
func cellWidth(line []rune, col int) int {
	if col >= len(line) {
		return 0
	}
	return runeWidth(line[col])
}

// writeCell writes column col of line, padded with spaces to w cells.
func writeCell(b *strings.Builder, line []rune, col, w int) {
	if col >= len(line) {
		return
	}
	b.WriteRune(line[col])
	b.WriteString(strings.Repeat(" ", w-runeWidth(line[col])))
}

// wideRanges are the ranges of runes terminals draw two cells wide: East
// Asian wide and fullwidth characters and the emoji blocks. It is an
// approximation (golang.org/x/text/width would be exact, at the cost of a
// dependency) that only aligns the failure output.
var wideRanges = [][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653},
	{0x267F, 0x267F}, {0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB},
	{0x26BD, 0x26BE}, {0x26C4, 0x26C5}, {0x26CE, 0x26CE}, {0x26D4, 0x26D4},
	{0x26EA, 0x26EA}, {0x26F2, 0x26F5}, {0x26FA, 0x26FD}, {0x2705, 0x2705},
	{0x270A, 0x270B}, {0x2728, 0x2728}, {0x274C, 0x274C}, {0x274E, 0x274E},
	{0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797}, {0x27B0, 0x27B0},
	{0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
	{0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE30, 0xFE4F},
	{0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
	{0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F},
	{0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF},
	{0x20000, 0x3FFFD},
}

// runeWidth returns how many terminal cells r takes: 2 for wide runes, 1
// for the others.
func runeWidth(r rune) int {
	if r < 0x1100 {
		return 1
	}
	i := sort.Search(len(wideRanges), func(i int) bool { return wideRanges[i][1] >= r })
	if i < len(wideRanges) && wideRanges[i][0] <= r {
		return 2
	}
	return 1
}
