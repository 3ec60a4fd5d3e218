// Package optlink links package rxthrottle's options to package limiterkit.
// limiterkit imports rxthrottle, so rxthrottle cannot import it; rxthrottle
// sets Resolve and NewOption in its init instead (as grpc's internal package
// does for its hidden options), and limiterkit calls them. Nothing else
// should use this package.
package optlink

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/benbjohnson/clock"
)

// Ext is an option that a package other than rxthrottle defines
// (limiterkit.NewOption): a name for errors ("redisstore.WithTimeout") and
// a value that only that package reads.
type Ext struct {
	Name  string
	Value any
}

// Settings is what a list of rxthrottle options says, after the defaults.
// L and E stand for rxthrottle.Limit and rxthrottle.Event, which this
// package cannot name (rxthrottle imports it).
type Settings[L, E any] struct {
	Clock           clock.Clock
	Limits          []L // from WithLimit, in order
	OnWait, OnAdmit func(E)
	HoldTimeout     time.Duration
	Spacing         time.Duration
	MaxKeys         int
	IdleMargin      time.Duration
	Concurrency     int // 0: no cap
	MaxQueue        int
	MaxQueueSet     bool
	KeyLimits       func(key string) []L
	Given           []string // every option's name, in order
	Exts            []Ext    // the options of other packages, in order
}

var (
	// Resolve is func([]rxthrottle.Option) (Settings[rxthrottle.Limit,
	// rxthrottle.Event], error): the options over rxthrottle's defaults,
	// validated as rxthrottle's constructors validate them.
	Resolve any
	// NewOption is func(Ext) rxthrottle.Option.
	NewOption any
)

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
