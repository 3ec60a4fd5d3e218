package redisstore

import (
	"fmt"
	"math"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// Times in the scripts are integers in microseconds on Redis's clock,
// carried by Lua numbers (doubles), which hold every integer up to 2^53
// exactly. So:
//
//   - maxTime, 2^53 µs after the Unix epoch (the year 2255), is the
//     scripts' horizon: an emission or a pause that would fall later
//     saturates there, which to any caller alive today means "never";
//   - maxWindow, 2^53 µs (about 285 years), is the longest window the
//     scripts can add to a time exactly: NewBucket and NewKeyed refuse a
//     longer one. A sum of a time and a window may pass 2^53, but it is
//     then rounded to a value above maxTime and saturates, so the
//     rounding never moves a caller earlier.
const (
	maxTime   int64 = 1 << 53
	maxWindow int64 = 1 << 53
)

// micros converts a duration to whole microseconds, the unit of the
// scripts, rounding up (a window is never enforced shorter than asked) and
// without overflow; a negative duration is 0.
func micros(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	us := int64(d / time.Microsecond)
	if d%time.Microsecond != 0 {
		us++
	}
	return us
}

// durationOf converts microseconds to a Duration, saturating at the
// longest Duration instead of wrapping around.
func durationOf(us int64) time.Duration {
	switch {
	case us > math.MaxInt64/int64(time.Microsecond):
		return math.MaxInt64
	case us < math.MinInt64/int64(time.Microsecond):
		return math.MinInt64
	}
	return time.Duration(us) * time.Microsecond
}

// checkWindow reports a limit whose window the scripts cannot count.
func checkWindow(i int, l rxthrottle.Limit) error {
	if micros(l.Window) > maxWindow {
		return fmt.Errorf("redisstore: limit #%d: window %v is longer than Redis's scripts can count exactly (2^53 µs, about 285 years)", i+1, l.Window)
	}
	return nil
}
