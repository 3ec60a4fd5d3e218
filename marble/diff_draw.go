package marble

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// mark is a notification or a subscription symbol to draw, at its instant
// since the start of Run.
type mark struct {
	at     time.Duration
	symbol rune
}

func wantMarks(want []wantEvent) []mark {
	ms := make([]mark, len(want))
	for i, w := range want {
		ms[i] = mark{at: w.at, symbol: kindSymbol(w.kind, w.symbol)}
	}
	return ms
}

func gotMarks(got []gotEvent) []mark {
	ms := make([]mark, len(got))
	for i, g := range got {
		ms[i] = mark{at: g.at, symbol: g.symbol}
	}
	return ms
}

// kindSymbol returns the symbol of a notification: # or | by kind, else
// the value's symbol.
func kindSymbol(kind Kind, symbol rune) rune {
	switch kind {
	case Error:
		return '#'
	case Complete:
		return '|'
	}
	return symbol
}

// onFrames reports whether every mark falls on a frame.
func onFrames(frame time.Duration, lines ...[]mark) bool {
	for _, ms := range lines {
		for _, m := range ms {
			if m.at%frame != 0 {
				return false
			}
		}
	}
	return true
}

// groupMarks groups marks (in time order) by instant.
func groupMarks(ms []mark) []cell {
	var out []cell
	for _, m := range ms {
		if n := len(out); n > 0 && out[n-1].at == m.at {
			out[n-1].symbols = append(out[n-1].symbols, m.symbol)
			continue
		}
		out = append(out, cell{at: m.at, symbols: []rune{m.symbol}})
	}
	return out
}

// drawGrid lays marks out one frame per column, so that column n is frame
// n (a mark between frames is drawn at the frame before it); it never
// fails (symbols are not checked: ? stands for a value without a symbol).
// exact is false when a cell had to be drawn later than its frame because
// a group before it was still open.
func drawGrid(ms []mark, frame time.Duration) (line string, exact bool) {
	var b strings.Builder
	exact = true
	col := int64(0)
	for _, c := range groupMarks(ms) {
		gap := int64(c.at/frame) - col
		if gap < 0 {
			exact, gap = false, 0
		}
		b.WriteString(strings.Repeat("-", int(gap)))
		if len(c.symbols) == 1 {
			b.WriteRune(c.symbols[0])
		} else {
			b.WriteString("(" + string(c.symbols) + ")")
		}
		col += gap + int64(c.width())
	}
	return b.String(), exact
}

// drawAligned draws two timelines, some of whose marks fall between
// frames, each as the marble that parses back to it (drawLine), and
// returns the column of the caret: the first column where the two
// drawings differ, or, if they do not (values that differ but are drawn
// alike), the column of the first instant that differs.
func drawAligned(line1, line2 []mark, frame, first time.Duration) (s1, s2 string, caret int, exact bool) {
	s1, col, _ := drawLine(line1, frame, first)
	s2, _, exact = drawLine(line2, frame, first)
	r1, r2 := []rune(s1), []rune(s2)
	for i := 0; i < len(r1) || i < len(r2); i++ {
		if i >= len(r1) || i >= len(r2) || r1[i] != r2[i] {
			return s1, s2, i, exact
		}
	}
	return s1, s2, col, exact
}

// drawLine draws marks as a marble that parses back to them: a gap that
// is not a whole number of frames (or is long) is a time progression, as
// in "a 10.2ms b". col is the column where the first cell at or after
// instant first begins; exact is as for drawGrid.
func drawLine(ms []mark, frame, first time.Duration) (line string, col int, exact bool) {
	w := writer{frame: frame}
	exact, col = true, -1
	pos := time.Duration(0)
	for _, c := range groupMarks(ms) {
		gap := c.at - pos
		if gap < 0 {
			exact, gap = false, 0
		}
		w.gap(gap)
		if c.at >= first && col < 0 {
			col = w.cols
		}
		w.cell(c.symbols)
		pos += gap + time.Duration(c.width())*frame
	}
	if col < 0 {
		col = w.cols
	}
	return w.b.String(), col, exact
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
