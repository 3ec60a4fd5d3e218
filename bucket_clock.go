package rxthrottle

import (
	"reflect"
	"time"

	"github.com/benbjohnson/clock"
)

// How a Bucket reads its clock: as an offset from the clock's base
// (hooks.base), always with its lock held (now); the window computes on
// such offsets and never sees a time.Time (offset and timeAt convert). The clock is the options' (hooks.clock, which
// the front's timer runs on too). The real clock, clock.New() and the
// default, is read with time.Since, which the compiler inlines into the
// caller: read through the clock.Clock interface it costs a call that
// cannot be inlined, a few nanoseconds of a free Wait's few tens
// (BENCHMARKS.md, "Bucket.Wait's hot path"). hooks.realClock says which,
// decided once when the options are resolved; a Bucket keeps no clock of
// its own.

// now reads the clock as a window offset. Every instant a bucket records
// is a reading taken with b.mu held (SPEC.md, "On the real clock"): one
// taken before the lock could be older than a decision made meanwhile by
// another goroutine, and would renew a token early. (Or, for a Wait of an
// open budget, one taken after its claim: wait_fastpath.go.) The hot paths
// (wait_hotpath.go) write it out, since it is too large to be inlined.
func (b *Bucket) now() int64 {
	if !b.hooks.realClock {
		return b.injectedNow()
	}
	return int64(time.Since(b.hooks.base))
}

// injectedNow is now on an injected clock (WithClock).
func (b *Bucket) injectedNow() int64 { return int64(b.hooks.clock.Since(b.hooks.base)) }

// offset converts t to a window offset, saturated.
func (b *Bucket) offset(t time.Time) int64 { return int64(t.Sub(b.hooks.base)) }

// timeAt converts a window offset back to a time.Time.
func (b *Bucket) timeAt(off int64) time.Time { return b.hooks.base.Add(time.Duration(off)) }

// realClockType is the type of clock.New()'s clock, which reads the time
// package.
var realClockType = reflect.TypeOf(clock.New())

// isRealClock reports whether c is the real clock (clock.New()), whose
// Since is time.Since.
func isRealClock(c clock.Clock) bool { return reflect.TypeOf(c) == realClockType }
