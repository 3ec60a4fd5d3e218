package rxthrottle

import (
	"errors"
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/limitrule"
)

// ErrInvalidLimit is wrapped by every error that reports a Limit which cannot
// be enforced (N < 1 or Window <= 0). Test for it with errors.Is.
var ErrInvalidLimit = errors.New("invalid limit")

// Limit is a quota of N tokens per sliding Window: at most N items are
// emitted in any half-open interval of length Window, and each token is
// renewed exactly Window after the emission that used it.
//
// The zero Limit is invalid; build one with Per.
type Limit struct {
	// N is the number of tokens (the burst size); it must be at least 1.
	N int
	// Window is the length of the sliding window; it must be positive.
	Window time.Duration
}

// Per returns the Limit of n tokens per window: "5 per second" is
// Per(5, time.Second). Per does not validate; constructors that take a Limit
// return an error wrapping ErrInvalidLimit for a bad one.
//
// An in-memory limiter remembers the completions of a window that its
// limits can count: up to n of them, 8 bytes each. For n above 2^20 it
// keeps a bounded summary instead (about 100 KiB whatever the rate; SPEC.md,
// "On the real clock"). For no limit at all, use Unlimited, which keeps
// nothing.
func Per(n int, window time.Duration) Limit {
	return Limit{N: n, Window: window}
}

// String returns the limit as "5 per 1s".
func (l Limit) String() string {
	return fmt.Sprintf("%d per %v", l.N, l.Window)
}

// Validate reports why l cannot be enforced, or nil. The error wraps
// ErrInvalidLimit and names the offending field.
func (l Limit) Validate() error {
	if reason := l.invalid(); reason != "" {
		return fmt.Errorf("rxthrottle: limit %v: %s: %w", l, reason, ErrInvalidLimit)
	}
	return nil
}

// invalid says what is wrong with l, or "" (limitrule.Invalid, the rule
// redisstore and throttletest check too).
func (l Limit) invalid() string { return limitrule.Invalid(l.N, l.Window) }
