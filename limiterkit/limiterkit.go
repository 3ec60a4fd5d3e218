// Package limiterkit is for those who build limiters on top of rxthrottle
// (a store of their own, as package redisstore does): it reads a list of
// rxthrottle options, so that the limiter takes rxthrottle.WithLimit,
// WithClock, OnAdmit... unchanged, and it lets the limiter define options
// of its own that mix with them in one list of rxthrottle.Option:
//
//	func WithTimeout(d time.Duration) rxthrottle.Option {
//		return limiterkit.NewOption("mystore.WithTimeout", d)
//	}
//
//	func NewBucket(limit rxthrottle.Limit, opts ...rxthrottle.Option) (*Bucket, error) {
//		s, err := limiterkit.Resolve(opts)
//		if err != nil {
//			return nil, err
//		}
//		if err := s.Check("mystore: NewBucket", "rxthrottle.WithLimit", "rxthrottle.OnAdmit", "mystore.WithTimeout"); err != nil {
//			return nil, err
//		}
//		...
//	}
//
// rxthrottle's own constructors refuse an option made with NewOption, with
// an error naming it. The limiter's Acquire returns Tokens made with
// NewToken over a TokenReleaser of its own. Users of limiters need nothing
// from this package.
package limiterkit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/kit"
)

// Extension is an option made with NewOption, as Settings.Extensions
// returns it.
type Extension struct {
	// Name is the name NewOption was given ("mystore.WithTimeout").
	Name string
	// Value is the value NewOption was given.
	Value any
}

// NewOption returns an rxthrottle.Option that carries value for the
// limiters of the package that defines it, under name: the name of the
// function that makes it, with its package ("mystore.WithTimeout"), since
// errors name the option by it. Only a limiter that reads it (through
// Settings.Extensions) does anything with it; rxthrottle's constructors,
// and Settings.Check without name among the names read, return an error
// naming it. The names of rxthrottle's options are rxthrottle's: a name
// that starts with "rxthrottle." becomes "limiterkit.NewOption(name)", so
// that no constructor takes it for rxthrottle's own; an empty name becomes
// "limiterkit.NewOption".
//
// A package that reads its options by name must still check the value's
// type: anyone may call NewOption with its names.
func NewOption(name string, value any) rxthrottle.Option {
	switch {
	case name == "":
		name = "limiterkit.NewOption"
	case strings.HasPrefix(name, "rxthrottle."):
		name = "limiterkit.NewOption(" + name + ")"
	}
	return rxthrottle.Kit().NewOption(kit.Ext{Name: name, Value: value})
}

// Settings is what a list of options says, read-only: rxthrottle's
// defaults, overridden by the options in their order (the last of two
// WithClock wins; every WithLimit adds a limit), and the options of other
// packages, in order. The zero Settings is that of no options but has no
// clock; get one from Resolve.
type Settings struct {
	s kit.Settings[rxthrottle.Limit, rxthrottle.Event]
}

// Resolve reads opts as rxthrottle's constructors do: a nil option, a nil
// clock, a negative spacing, a hold timeout not positive... are errors,
// the same as rxthrottle.NewBucket returns. It does not validate the limits
// of WithLimit: validate them with the limiter's first limit
// (rxthrottle.Limit.Validate), as the limiter counts them.
func Resolve(opts []rxthrottle.Option) (Settings, error) {
	s, err := rxthrottle.Kit().Resolve(opts)
	return Settings{s}, err
}

// Check returns an error if an option was given whose name is not among
// reads: a constructor that does not read an option says so rather than
// ignore it. who prefixes the error: Check("mystore: NewBucket",
// "rxthrottle.WithLimit") given rxthrottle.OnWait returns "mystore:
// NewBucket does not read rxthrottle.OnWait". rxthrottle's options are
// named "rxthrottle.WithLimit", "rxthrottle.WithClock"... (their function's
// name, package first); other packages' by the name given to NewOption.
func (s Settings) Check(who string, reads ...string) error {
	for _, name := range s.s.Given {
		if !slices.Contains(reads, name) {
			return fmt.Errorf("%s does not read %s", who, name)
		}
	}
	return nil
}

// Given returns the names of the options given, in order (see Check).
func (s Settings) Given() []string { return slices.Clone(s.s.Given) }

// Extensions returns the options made with NewOption, in the order given.
func (s Settings) Extensions() []Extension {
	out := make([]Extension, len(s.s.Exts))
	for i, e := range s.s.Exts {
		out[i] = Extension(e)
	}
	return out
}

// Clock returns the clock of rxthrottle.WithClock, or the real clock.
func (s Settings) Clock() clock.Clock { return s.s.Clock }

// Limits returns the limits of rxthrottle.WithLimit, in order (not
// validated, see Resolve); the limiter's first limit is not among them.
func (s Settings) Limits() []rxthrottle.Limit { return slices.Clone(s.s.Limits) }

// OnWait returns the hook of rxthrottle.OnWait, or nil. Call it as
// rxthrottle's limiters do (see rxthrottle.OnWait): with no lock held,
// through CallHook.
func (s Settings) OnWait() func(rxthrottle.Event) { return s.s.OnWait }

// OnAdmit returns the hook of rxthrottle.OnAdmit, or nil; call it as OnWait.
func (s Settings) OnAdmit() func(rxthrottle.Event) { return s.s.OnAdmit }

// HoldTimeout returns the timeout of rxthrottle.WithHoldTimeout, or
// rxthrottle.DefaultHoldTimeout; it is positive.
func (s Settings) HoldTimeout() time.Duration { return s.s.HoldTimeout }

// Spacing returns the gap of rxthrottle.WithSpacing, or 0; it is not
// negative.
func (s Settings) Spacing() time.Duration { return s.s.Spacing }

// MaxKeys returns the bound of rxthrottle.WithMaxKeys, or 0 (none).
func (s Settings) MaxKeys() int { return s.s.MaxKeys }

// IdleMargin returns the margin of rxthrottle.WithIdleMargin, or 0.
func (s Settings) IdleMargin() time.Duration { return s.s.IdleMargin }

// Concurrency returns the cap of rxthrottle.WithConcurrency, or 0 (none).
func (s Settings) Concurrency() int { return s.s.Concurrency }

// AdaptiveConcurrency returns the bounds of
// rxthrottle.WithAdaptiveConcurrency and true, or 0, 0 and false if it was
// not given.
func (s Settings) AdaptiveConcurrency() (min, max int, ok bool) {
	return s.s.AdaptMin, s.s.AdaptMax, s.s.AdaptMax > 0
}

// MaxQueue returns the bound of rxthrottle.WithMaxQueue and true, or 0
// and false if none was given (nothing is refused); a bound of 0 refuses
// every caller that would wait.
func (s Settings) MaxQueue() (n int, ok bool) { return s.s.MaxQueue, s.s.MaxQueueSet }

// KeyLimits returns the function of rxthrottle.WithKeyLimits, or nil. Call
// it as rxthrottle.WithKeyLimits says: outside the limiter's locks, its
// panic and invalid limits an error of that key's call.
func (s Settings) KeyLimits() func(key string) []rxthrottle.Limit { return s.s.KeyLimits }

// CallHook calls a hook of OnWait or OnAdmit with ev as rxthrottle's
// limiters do: a panic in it is recovered and logged with log/slog's
// default logger, stack included, so that it neither kills the process nor
// leaves the limiter half-updated. A nil f does nothing. Call it with no
// lock of the limiter held: a hook may call back into the limiter.
func CallHook(f func(rxthrottle.Event), ev rxthrottle.Event) {
	if f != nil {
		kit.CallHook(f, ev, ev.Key)
	}
}
