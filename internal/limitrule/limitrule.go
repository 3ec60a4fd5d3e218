// Package limitrule is what makes a quota of n tokens per window one that
// can be enforced (rxthrottle.Limit's rule, SPEC.md), stated once for the
// packages that check one: the root, redisstore and throttletest, each of
// which words its own error around the reason and wraps
// rxthrottle.ErrInvalidLimit. It cannot take a Limit: the root imports it.
package limitrule

import "time"

// Invalid says what is wrong with a limit of n tokens per window, or "".
func Invalid(n int, window time.Duration) string {
	switch {
	case n < 1:
		return "N must be at least 1"
	case window <= 0:
		return "Window must be positive"
	}
	return ""
}
