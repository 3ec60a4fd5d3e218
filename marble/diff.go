package marble

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Drawing limits for the failure output: timelines wider than maxWidth
// columns are cut to a window that starts a little before the first
// difference; lists of differing events stop after maxListed.
const (
	maxWidth  = 100
	lead      = 30
	maxListed = 10
)

// gotEvent is a recorded notification with the symbol it is drawn with.
type gotEvent struct {
	record
	symbol rune
}

func named(rs []record, values map[string]any) []gotEvent {
	out := make([]gotEvent, len(rs))
	for i, r := range rs {
		out[i] = gotEvent{record: r}
		out[i].symbol = symbolFor(out[i], values)
	}
	return out
}

func matches(w wantEvent, g gotEvent) bool {
	if w.at != g.at || w.kind != g.kind {
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
// message: both timelines drawn one above the other (one frame per column,
// or, if some events fall between frames, as marbles with the time
// progressions that put them there), a caret under the first instant
// where they differ, and the events each has that the other lacks.
func diffTimelines(want []wantEvent, got []record, values map[string]any, frame time.Duration) string {
	k := 0
	for k < len(want) && k < len(got) && matches(want[k], gotEvent{record: got[k]}) {
		k++
	}
	if k == len(want) && k == len(got) {
		return ""
	}
	// Naming the values (a search of the values map) only for a failure.
	ge := named(got, values)
	first := time.Duration(-1)
	if k < len(want) {
		first = want[k].at
	}
	if k < len(ge) && (first < 0 || ge[k].at < first) {
		first = ge[k].at
	}

	var b strings.Builder
	fmt.Fprintf(&b, "timelines differ at %s\n", when(first, frame))
	wm, gm := wantMarks(want), gotMarks(ge)
	var wantLine, gotLine string
	var caret int
	exact := true
	if onFrames(frame, wm, gm) {
		wantLine, _ = drawGrid(wm, frame)
		gotLine, exact = drawGrid(gm, frame)
		caret = int(first / frame)
	} else {
		wantLine, gotLine, caret, exact = drawAligned(wm, gm, frame, first)
	}
	drawPair(&b, "want", wantLine, "got", gotLine, int64(caret))
	if !exact {
		b.WriteString("  (got has events closer together than its groups are wide, so the drawing shows some late; the times below are exact)\n")
	}

	onlyWant, onlyGot := unmatched(want, ge)
	listEvents(&b, "only in want", len(onlyWant), func(i int) string {
		w := want[onlyWant[i]]
		return describe(w.kind, w.symbol, w.value, when(w.at, frame))
	})
	listEvents(&b, "only in got", len(onlyGot), func(i int) string {
		g := ge[onlyGot[i]]
		return describe(g.kind, g.symbol, g.value, when(g.at, frame))
	})
	if onFrames(frame, wm) {
		for _, g := range ge {
			if g.at%frame != 0 {
				fmt.Fprintf(&b, "  got %s between frames %d and %d (%v after the start; a frame is %v): make every delay of the pipeline a whole number of frames (WithFrame), or, if that is the right instant, expect it there with a time progression, as the got line shows\n",
					g.kind, g.at/frame, g.at/frame+1, g.at, frame)
				break
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// unmatched pairs equal events of want and got (in order, within each
// instant) and returns the indexes of those left over on each side.
func unmatched(want []wantEvent, got []gotEvent) (onlyWant, onlyGot []int) {
	byInstant := make(map[time.Duration][]int)
	for j, g := range got {
		byInstant[g.at] = append(byInstant[g.at], j)
	}
	used := make([]bool, len(got))
	for i, w := range want {
		found := false
		for _, j := range byInstant[w.at] {
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

// when names an instant since the start of Run: "frame 9", or
// "10.2ms (between frames 10 and 11)".
func when(at, frame time.Duration) string {
	if at%frame == 0 {
		return fmt.Sprintf("frame %d", at/frame)
	}
	return fmt.Sprintf("%v (between frames %d and %d)", at, at/frame, at/frame+1)
}

// symbolFor names a recorded value with the symbol the values map gives
// it (the first key in sorted order if several), or with itself if the
// map is nil and the value is a one-rune string that can be a value, or ?
// if nothing fits.
func symbolFor(g gotEvent, values map[string]any) rune {
	switch g.kind {
	case Error:
		return '#'
	case Complete:
		return '|'
	}
	if values == nil {
		if s, ok := g.value.(string); ok {
			if r, n := utf8.DecodeRuneInString(s); n == len(s) && n > 0 && isValue(r) {
				return r
			}
		}
		return '?'
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if r, n := utf8.DecodeRuneInString(k); n == len(k) && isValue(r) && reflect.DeepEqual(values[k], g.value) {
			return r
		}
	}
	return '?'
}
