// Package kit is the link between package rxthrottle and package
// limiterkit, which imports rxthrottle and so cannot be imported by it.
// rxthrottle implements Root and hands it out through its exported
// constructor rxthrottle.Kit; limiterkit calls it. There is no package
// state: the types here only name what crosses the link. Nothing but
// rxthrottle and limiterkit should use this package.
package kit

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/benbjohnson/clock"
)

// Root is what package rxthrottle offers package limiterkit. O, L, E and T
// stand for rxthrottle.Option, Limit, Event and Token, which this package
// cannot name.
type Root[O, L, E, T any] interface {
	// Resolve reads opts over rxthrottle's defaults, validated as
	// rxthrottle's constructors validate them (the limits excepted).
	Resolve(opts []O) (Settings[L, E], error)
	// NewOption returns the option of another package that e describes.
	NewOption(e Ext) O
	// NewToken returns the Token for hold id of r.
	NewToken(r Releaser, id uint64) T
}

// Ext is an option that a package other than rxthrottle defines
// (limiterkit.NewOption): a name for errors ("redisstore.WithTimeout") and
// a value that only that package reads.
type Ext struct {
	Name  string
	Value any
}

// Settings is what a list of rxthrottle options says, after the defaults.
type Settings[L, E any] struct {
	Clock           clock.Clock
	Limits          []L // from WithLimit, in order
	OnWait, OnAdmit func(E)
	HoldTimeout     time.Duration
	Spacing         time.Duration
	MaxKeys         int
	IdleMargin      time.Duration
	Concurrency     int // 0: no cap
	// AdaptMin and AdaptMax are WithAdaptiveConcurrency's bounds, 0 without it.
	AdaptMin, AdaptMax int
	MaxQueue           int
	MaxQueueSet        bool
	KeyLimits          func(key string) []L
	Given              []string // every option's name, in order
	Exts               []Ext    // the options of other packages, in order
}

// Releaser ends the holds of a limiter's Tokens: limiterkit.TokenReleaser.
type Releaser interface {
	ReleaseToken(id uint64)
	CancelToken(id uint64)
}

// ReleaserN is a Releaser that records usage: limiterkit.TokenReleaserN.
type ReleaserN interface {
	Releaser
	ReleaseTokenN(id uint64, used int) error
}

// CallHook calls f(ev), recovering and logging (log/slog's default logger,
// stack included) a panic in it: a hook runs on whatever goroutine made the
// decision, and its panic must neither kill the process nor leave the
// limiter half-updated. key names the caller in the log.
func CallHook[E any](f func(E), ev E, key string) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("rxthrottle: a hook panicked; the limiter is unaffected",
				"key", key, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	f(ev)
}
