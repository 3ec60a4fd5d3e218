package example

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// READMEBlock returns the first fenced code block (```) after the line
// heading (for example "## The demo") of the Markdown file at path, without
// its fences.
func READMEBlock(path, heading string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("example: %w", err)
	}
	defer f.Close()
	var (
		sc        = bufio.NewScanner(f)
		headingAt int  // the heading's line number, 0 before it
		in        bool // inside the block
		block     strings.Builder
	)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case headingAt == 0:
			if line == heading {
				headingAt = n
			}
		case !in && strings.HasPrefix(line, "#"): // the next section
			return "", fmt.Errorf("example: %s: the section %q (line %d) has no code block", path, heading, headingAt)
		case !in:
			in = strings.HasPrefix(line, "```")
		case strings.HasPrefix(line, "```"):
			return block.String(), nil
		default:
			block.WriteString(line + "\n")
		}
	}
	switch {
	case sc.Err() != nil:
		return "", fmt.Errorf("example: reading %s: %w", path, sc.Err())
	case headingAt == 0:
		return "", fmt.Errorf("example: %s has no line %q", path, heading)
	case in:
		return "", fmt.Errorf("example: %s: the code block of section %q (line %d) is not closed", path, heading, headingAt)
	}
	return "", fmt.Errorf("example: %s: the section %q (line %d) has no code block", path, heading, headingAt)
}

// clockReading is a clock reading as the examples print demo time: "0:04",
// "10:14", "1:02:03".
var clockReading = regexp.MustCompile(`\b\d+:\d\d(:\d\d)?\b`)

// loopbackPort is the port of a loopback URL, which the system picks.
var loopbackPort = regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):\d+`)

// Tolerance says where a README's sample, taken from a real run, may differ
// from the program's output on virtual time: only where a real run is not
// reproducible.
type Tolerance struct {
	// Slack is how much later than the output's a clock reading (m:ss or
	// h:mm:ss) of the sample may be: network and scheduling delays
	// accumulate on a real clock, and they never make anything earlier.
	Slack time.Duration
	// Rows, if set, matches the rows of a table of counts per time slot
	// (such as "     2:00     26     0 #############"). In a real run a
	// request that arrives near a slot's end may be counted in the next
	// one, so a row of the sample matches any row of the output that has
	// the same first clock reading (the slot), whatever its counts.
	Rows *regexp.Regexp
}

// MatchSample reports whether sample, a program's output as a README shows
// it, is what the program printed as output, on virtual time. The sample
// may leave lines out (it is trimmed, and a line of just "..." marks a
// cut), but the lines it keeps must be lines of output, in the same order.
// Two lines match when they are the same but where tol allows, and but for
// the port of a loopback address (the system picks it) and the width of
// runs of spaces (a later reading can be a character wider).
//
// The error says which line of the sample found no match, and the nearest
// line of output.
func MatchSample(sample, output string, tol Tolerance) error {
	want := strings.Split(strings.TrimRight(sample, "\n"), "\n")
	got := strings.Split(strings.TrimRight(output, "\n"), "\n")
	next := 0 // the first line of got not yet matched
	for i, w := range want {
		if strings.TrimSpace(w) == "..." {
			continue
		}
		found := false
		for j := next; j < len(got) && !found; j++ {
			if _, err := matchLine(w, got[j], tol); err == nil {
				next, found = j+1, true
			}
		}
		if !found {
			return fmt.Errorf("example: line %d of the sample, %q, is not in the output after its line %d%s",
				i+1, w, next, nearest(w, got[next:], tol))
		}
	}
	return nil
}

// matchLine returns nil if want, a line of a sample, matches got, a line of
// output; otherwise an error, and whether the two differ only in their
// clock readings.
func matchLine(want, got string, tol Tolerance) (sameText bool, err error) {
	if tol.Rows != nil && tol.Rows.MatchString(want) {
		if !tol.Rows.MatchString(got) || clockReading.FindString(want) != clockReading.FindString(got) {
			return false, errors.New("not the same row")
		}
		return true, nil
	}
	want, got = loopbackPort.ReplaceAllString(want, "$1:PORT"), loopbackPort.ReplaceAllString(got, "$1:PORT")
	wantText, gotText := clockReading.Split(want, -1), clockReading.Split(got, -1)
	if len(wantText) != len(gotText) {
		return false, fmt.Errorf("%d clock readings, want %d", len(gotText)-1, len(wantText)-1)
	}
	for i := range wantText {
		if strings.Join(strings.Fields(wantText[i]), " ") != strings.Join(strings.Fields(gotText[i]), " ") {
			return false, errors.New("the text differs")
		}
	}
	wantClocks, gotClocks := clockReading.FindAllString(want, -1), clockReading.FindAllString(got, -1)
	for i := range wantClocks {
		w, g := parseClock(wantClocks[i]), parseClock(gotClocks[i])
		if w < g || w > g+tol.Slack {
			return true, fmt.Errorf("%s is not %s or up to %v later", wantClocks[i], gotClocks[i], tol.Slack)
		}
	}
	return true, nil
}

// nearest describes the first line of got that has want's text but other
// clock readings, if there is one.
func nearest(want string, got []string, tol Tolerance) string {
	for _, g := range got {
		if sameText, err := matchLine(want, g, tol); sameText {
			return fmt.Sprintf("; nearest: %q (%v)", g, err)
		}
	}
	return ""
}

// parseClock reads a clock reading that clockReading matched.
func parseClock(s string) time.Duration {
	var d time.Duration
	for _, part := range strings.Split(s, ":") {
		n, _ := strconv.Atoi(part) // digits only, by clockReading
		d = d*60 + time.Duration(n)
	}
	return d * time.Second
}
