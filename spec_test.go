package rxthrottle

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// This file holds the reference model of SPEC.md that the property tests of
// every in-memory limiter compare against, and the check that every section
// the code cites is in SPEC.md.

// specCitation matches a comment's citation of a section of SPEC.md: the
// section's name in double quotes right after SPEC, SPEC.md or their
// possessive, with an optional comma or colon: (SPEC.md, "Keys"), SPEC.md
// "Keys", SPEC's "Keys", SPEC: "Keys". A citation may run over two comment
// lines.
var specCitation = regexp.MustCompile(`SPEC(?:\.md)?(?:'s)?\s*[,:]?\s*"([^"]+)"`)

// TestSpecCitations fails for every comment, in every .go file of every
// module of the repository, and every Markdown file, that cites a section
// SPEC.md does not have. A
// citation names a heading of SPEC.md, either whole or its part before a
// colon ("Held tokens" for "Held tokens: renewal on completion").
func TestSpecCitations(t *testing.T) {
	sections := specSections(t, "SPEC.md")
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir // .git, .ci's work trees
		}
		var cs []citation
		switch {
		case d.IsDir():
		case strings.HasSuffix(path, ".go"):
			cs = specCitations(t, path)
		case strings.HasSuffix(path, ".md"):
			cs = markdownCitations(t, path)
		}
		for _, c := range cs {
			n++
			if !sections[c.section] {
				t.Errorf("%s:%d: cites SPEC.md %q, which is not a section of SPEC.md", path, c.line, c.section)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no citation of SPEC.md found: the pattern no longer matches the code's")
	}
}

// specSections returns the names a citation may use for the headings of
// the Markdown file at path; it fails on a heading that appears twice.
func specSections(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h, ok := strings.CutPrefix(sc.Text(), "## ")
		if !ok {
			continue
		}
		h = strings.TrimSpace(h)
		if names[h] {
			t.Errorf("%s: heading %q appears twice", path, h)
		}
		names[h] = true
		if short, _, ok := strings.Cut(h, ":"); ok {
			names[strings.TrimSpace(short)] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// citation is one comment's citation of a SPEC.md section.
type citation struct {
	line    int
	section string
}

// specCitations returns the citations of SPEC.md sections in the comments
// of the Go file at path, each with the line it starts on.
func specCitations(t *testing.T, path string) []citation {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []citation
	for _, g := range f.Comments {
		text, lines := commentText(fset, g)
		for _, m := range specCitation.FindAllStringSubmatchIndex(text, -1) {
			i := sort.SearchInts(lines.offsets, m[0]+1) - 1
			section := strings.Join(strings.Fields(text[m[2]:m[3]]), " ")
			out = append(out, citation{lines.lines[i], section})
		}
	}
	return out
}

// markdownCitations returns the citations of SPEC.md sections in the
// Markdown file at path, each with the line it starts on.
func markdownCitations(t *testing.T, path string) []citation {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\n", " ")
	var out []citation
	for _, m := range specCitation.FindAllStringSubmatchIndex(text, -1) {
		line := 1 + strings.Count(string(data[:m[0]]), "\n")
		out = append(out, citation{line, strings.Join(strings.Fields(text[m[2]:m[3]]), " ")})
	}
	return out
}

// commentLines maps offsets of a comment group's text to file lines: the
// text from offsets[i] on is from line lines[i].
type commentLines struct{ offsets, lines []int }

// commentText returns a comment group's text as one line, its markers
// removed and its lines joined by spaces, and where each line starts.
func commentText(fset *token.FileSet, g *ast.CommentGroup) (string, commentLines) {
	var b strings.Builder
	var cl commentLines
	for _, c := range g.List {
		line := fset.Position(c.Pos()).Line
		for i, l := range strings.Split(c.Text, "\n") {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "//"), "/*")
			cl.offsets = append(cl.offsets, b.Len())
			cl.lines = append(cl.lines, line+i)
			b.WriteString(strings.TrimSuffix(l, "*/"))
			b.WriteByte(' ')
		}
	}
	return b.String(), cl
}

// specItem is one arrival in a generated case, times relative to the start.
type specItem struct {
	arrive time.Duration
	cancel time.Duration // < 0: never cancelled
	isErr  bool          // operator only: an error item, which takes no token
}

// specSchedule returns the emission time of each item by SPEC.md's formula,
// e_i = max(a_i, e_(i-1), max_k(e_(i-N_k) + W_k)), where cancelled items
// (cancel < their emission) and error items take no token; it returns -1 for
// a cancelled item. An error item is emitted at max(a_i, e_(i-1)).
func specSchedule(limits []Limit, items []specItem) []time.Duration {
	out := make([]time.Duration, len(items))
	var emitted []time.Duration // emissions that took a token
	last := time.Duration(-1 << 63)
	for i, it := range items {
		e := max(it.arrive, last)
		if !it.isErr {
			for _, l := range limits {
				if len(emitted) >= l.N {
					e = max(e, emitted[len(emitted)-l.N]+l.Window)
				}
			}
		}
		if it.cancel >= 0 && it.cancel < e {
			out[i] = -1
			continue
		}
		out[i] = e
		last = e
		if !it.isErr {
			emitted = append(emitted, e)
		}
	}
	return out
}

// maxInWindow returns the largest number of times that fall in one half-open
// window [t, t+w) (times need not be sorted; negative ones are ignored).
func maxInWindow(times []time.Duration, w time.Duration) int {
	ts := make([]time.Duration, 0, len(times))
	for _, t := range times {
		if t >= 0 {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	best, lo := 0, 0
	for hi := range ts {
		for ts[hi]-ts[lo] >= w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// randomCase draws limits and arrivals. Times are whole milliseconds so that
// many arrivals coincide and many emissions fall exactly on a renewal;
// cancellations fall on half milliseconds, so a cancellation never races an
// emission at the same instant.
func randomCase(r *rand.Rand, maxLimits int, withErrors bool) ([]Limit, []specItem) {
	limits := make([]Limit, 1+r.IntN(maxLimits))
	for i := range limits {
		limits[i] = Per(1+r.IntN(6), time.Duration(1+r.IntN(20))*time.Millisecond)
	}
	items := make([]specItem, r.IntN(40))
	var t time.Duration
	for i := range items {
		if r.IntN(3) > 0 { // a third of the items arrive with the previous one
			t += time.Duration(r.IntN(8)) * time.Millisecond
		}
		items[i] = specItem{arrive: t, cancel: -1}
		if r.IntN(6) == 0 {
			items[i].cancel = t + time.Duration(r.IntN(30))*time.Millisecond + time.Millisecond/2
		}
		if withErrors && r.IntN(8) == 0 {
			items[i].isErr = true
			items[i].cancel = -1
		}
	}
	return limits, items
}
