package marble

import (
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics and that every marble it accepts
// renders to a marble that parses back to the same timeline, and that the
// rendering is canonical (rendering it again changes nothing).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "-a-b|", "(ab)c", "--^--a--!", "a 10ms b", "1.5s |", "2m #",
		"a-(b-c|", "(^!)", "  a  ", "12 3", "a1ms", "10msa", "((a))", "-()",
		"a 1s 1", "^--!", "x#", "(a|)",
		"a 10.2ms b|", "0.5ms ^ 1.5ms !", "1.5 s 0.3ms a", "--🙈--🙉--|", "é*.?", "a\tb",
	} {
		f.Add(seed, int64(time.Millisecond))
	}
	f.Add("a 1s b", int64(7*time.Microsecond))
	f.Fuzz(func(t *testing.T, marble string, frameNs int64) {
		frame := time.Duration(frameNs)
		tl, err := Parse(marble, frame)
		if err != nil {
			return
		}
		s, err := Render(tl, frame)
		if err != nil {
			t.Fatalf("Render(Parse(%q)): %v", marble, err)
		}
		back, err := Parse(s, frame)
		if err != nil {
			t.Fatalf("Parse(Render(Parse(%q))) = Parse(%q): %v", marble, s, err)
		}
		if !sameTimeline(tl, back) {
			t.Fatalf("Parse(%q) = %+v, but Parse(Render) = Parse(%q) = %+v", marble, tl, s, back)
		}
		again, err := Render(back, frame)
		if err != nil || again != s {
			t.Fatalf("Render is not canonical: %q then %q (%v)", s, again, err)
		}
	})
}
