// Package seconds converts durations to the whole seconds of HTTP headers
// (Retry-After, RateLimit-Reset, a policy's window), for guard,
// httpthrottle and throttletest alike.
package seconds

import "time"

// Ceil returns d in whole seconds, rounded up (0 for d <= 0): the value of
// a Retry-After header that never tells a client to come back too early.
// It does not overflow, even for the largest time.Duration.
func Ceil(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return s
}
