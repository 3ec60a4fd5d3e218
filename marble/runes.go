package marble

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// isSyntax reports whether r is a symbol of the marble syntax.
func isSyntax(r rune) bool {
	switch r {
	case ' ', '-', '(', ')', '^', '!', '|', '#':
		return true
	}
	return false
}

// isValue reports whether r stands for a value: any rune that is not
// syntax, as in rxjs, emoji included, except those invisible returns a
// message for.
func isValue(r rune) bool { return !isSyntax(r) && invisible(r) == "" }

// invisible says why r cannot be a value though it is not syntax, or ""
// if it can: a rune that cannot be seen in the marble (a tab, a joiner, a
// combining mark) would take a frame nobody sees, and it is almost always
// a mistake (an emoji written with a variation selector is two runes).
func invisible(r rune) string {
	if r >= ' ' && r < 0x7f {
		return "" // printable ASCII: the usual case, without the tables
	}
	switch {
	case r != ' ' && unicode.IsSpace(r):
		return fmt.Sprintf("whitespace %q other than a space (only spaces align marbles)", r)
	case unicode.IsControl(r):
		return fmt.Sprintf("control character %U", r)
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return fmt.Sprintf("invisible rune %U (a combining mark, a joiner or a variation selector; a value is one rune, and an emoji written with such runes is several)", r)
	}
	return ""
}

// invalidUTF8 returns the 0-based column (in runes) of the first invalid
// UTF-8 byte of s, or -1.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	col := 0
	for i := 0; i < len(s); col++ {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return col
		}
		i += n
	}
	return -1
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// quote quotes a marble like %q, but escapes the runes that cannot be
// seen even where %q would print them (U+FE0F, U+0301), so that the
// message shows the rune at fault.
func quote(marble string) string {
	q := strconv.Quote(marble)
	var b strings.Builder
	for _, r := range q {
		if invisible(r) != "" {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
