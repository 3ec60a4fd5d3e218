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
