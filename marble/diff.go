package marble

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Drawing limits for the failure output: timelines wider than maxWidth
// columns are cut to a window that starts a little before the first
// difference; lists of differing events stop after maxListed.
const (
	maxWidth  = 100
	lead      = 30
	maxListed = 10
)

// gotEvent is a recorded notification placed on the frame grid.
type gotEvent struct {
	record
	frame int64 // whole frames since the start of Run (rounded down)
	exact bool  // at is a whole number of frames
}

func place(rs []record, frame time.Duration) []gotEvent {
	out := make([]gotEvent, len(rs))
	for i, r := range rs {
		out[i] = gotEvent{record: r, frame: int64(r.at / frame), exact: r.at%frame == 0}
	}
	return out
}

func matches(w wantEvent, g gotEvent) bool {
	if !g.exact || w.frame != g.frame || w.kind != g.kind {
		return false
	}
	switch w.kind {
	case Next:
		return reflect.DeepEqual(w.value, g.value)
	case Error:
		we, _ := w.value.(error)
		ge, _ := g.value.(error)
		return errors.Is(ge, we) || reflect.DeepEqual(w.value, g.value)
	}
	return true
}

// diffTimelines returns "" if got is what want describes, else the failure
// message: both timelines drawn one frame per column, one above the other,
// a caret under the first frame where they differ, and the events each
// has that the other lacks.
func diffTimelines(want []wantEvent, got []record, values map[string]any, frame time.Duration) string {
	ge := place(got, frame)
	k := 0
	for k < len(want) && k < len(ge) && matches(want[k], ge[k]) {
		k++
	}
	if k == len(want) && k == len(ge) {
		return ""
	}
	first := int64(-1)
	if k < len(want) {
		first = want[k].frame
	}
	if k < len(ge) && (first < 0 || ge[k].frame < first) {
		first = ge[k].frame
	}

	var b strings.Builder
	fmt.Fprintf(&b, "timelines differ at frame %d\n", first)
	wantLine, _ := drawWant(want)
	gotLine, gotExact := drawGot(ge, values)
	drawPair(&b, "want", wantLine, "got", gotLine, first)
	if !gotExact {
		b.WriteString("  (got has events closer together than its groups are wide, so the drawing shows some late; the frames below are exact)\n")
	}

	onlyWant, onlyGot := unmatched(want, ge)
	listEvents(&b, "only in want", len(onlyWant), func(i int) string {
		w := want[onlyWant[i]]
		return describe(w.kind, w.symbol, w.value, fmt.Sprintf("frame %d", w.frame))
	})
	listEvents(&b, "only in got", len(onlyGot), func(i int) string {
		g := ge[onlyGot[i]]
		return describe(g.kind, symbolFor(g, values), g.value, gotWhen(g, frame))
	})
	for _, g := range ge {
		if !g.exact {
			fmt.Fprintf(&b, "  got %s between frames %d and %d (%v after the start; a frame is %v): make every delay of the pipeline a whole number of frames (WithFrame)\n",
				g.kind, g.frame, g.frame+1, g.at, frame)
			break
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// unmatched pairs equal events of want and got (in order, within each
// frame) and returns the indexes of those left over on each side.
func unmatched(want []wantEvent, got []gotEvent) (onlyWant, onlyGot []int) {
	byFrame := make(map[int64][]int)
	for j, g := range got {
		byFrame[g.frame] = append(byFrame[g.frame], j)
	}
	used := make([]bool, len(got))
	for i, w := range want {
		found := false
		for _, j := range byFrame[w.frame] {
			if !used[j] && matches(w, got[j]) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			onlyWant = append(onlyWant, i)
		}
	}
	for j := range got {
		if !used[j] {
			onlyGot = append(onlyGot, j)
		}
	}
	return onlyWant, onlyGot
}

func listEvents(b *strings.Builder, title string, n int, line func(int) string) {
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "  %s:\n", title)
	for i := 0; i < n && i < maxListed; i++ {
		fmt.Fprintf(b, "    %s\n", line(i))
	}
	if n > maxListed {
		fmt.Fprintf(b, "    ... and %d more\n", n-maxListed)
	}
}

func describe(kind Kind, symbol rune, value any, when string) string {
	switch kind {
	case Next:
		return fmt.Sprintf("%s: %c = %#v", when, symbol, value)
	case Error:
		return fmt.Sprintf("%s: # = %v", when, value)
	}
	return when + ": |"
}

func gotWhen(g gotEvent, frame time.Duration) string {
	if g.exact {
		return fmt.Sprintf("frame %d", g.frame)
	}
	return fmt.Sprintf("%v (between frames %d and %d)", g.at, g.frame, g.frame+1)
}

// symbolFor names a recorded value with the letter the values map gives
// it (the first in alphabetical order if several), or with itself if the
// map is nil and the value is a one-letter string, or ? if nothing fits.
func symbolFor(g gotEvent, values map[string]any) rune {
	switch g.kind {
	case Error:
		return '#'
	case Complete:
		return '|'
	}
	if values == nil {
		if s, ok := g.value.(string); ok && len(s) == 1 && isValue(rune(s[0])) {
			return rune(s[0])
		}
		return '?'
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if reflect.DeepEqual(values[k], g.value) && len(k) == 1 {
			return rune(k[0])
		}
	}
	return '?'
}

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

// diffSubscriptions returns "" if got (a source's subscription log) is
// what want describes, else the failure message.
func diffSubscriptions(want, got []subscriptionRecord, frame time.Duration) string {
	sortRecords(want)
	sortRecords(got)
	if reflect.DeepEqual(want, got) || len(want) == 0 && len(got) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("subscriptions differ\n")
	drawRecords(&b, "want", want, frame)
	drawRecords(&b, "got ", got, frame)
	return strings.TrimRight(b.String(), "\n")
}

func sortRecords(rs []subscriptionRecord) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.subscribed != b.subscribed {
			return a.subscribed < b.subscribed
		}
		if a.ended != b.ended {
			return a.ended
		}
		return a.unsubscribed < b.unsubscribed
	})
}

func drawRecords(b *strings.Builder, name string, rs []subscriptionRecord, frame time.Duration) {
	if len(rs) == 0 {
		fmt.Fprintf(b, "  %s: (no subscription)\n", name)
		return
	}
	for i, r := range rs {
		label := name + ":"
		if i > 0 {
			label = strings.Repeat(" ", len(label))
		}
		tl := Timeline{Subscribe: int64(r.subscribed / frame), Unsubscribe: NoFrame}
		if r.ended {
			tl.Unsubscribe = int64(r.unsubscribed / frame)
		}
		s, _ := draw(tl)
		note := ""
		if r.subscribed%frame != 0 || r.ended && r.unsubscribed%frame != 0 {
			note = fmt.Sprintf("   (between frames: %v)", r)
		}
		fmt.Fprintf(b, "  %s %s%s\n", label, s, note)
	}
}
