package guard

import (
	"errors"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"
)

// Option configures a Guard; see New.
type Option interface {
	apply(*config)
}

// config holds every option's value; buildConfig sets the defaults and
// checks them.
type config struct {
	clock      clock.Clock
	logger     *slog.Logger
	loggerSet  bool
	store      Store
	storeSet   bool
	maxKeys    int
	maxKeysSet bool
	onLimited  func(key string, d Decision)
	onBlocked  func(key string, until time.Time)
}

func buildConfig(opts []Option) (config, error) {
	c := config{clock: clock.New()}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("guard: nil Option")
		}
		o.apply(&c)
	}
	switch {
	case c.clock == nil:
		return c, errors.New("guard: WithClock(nil): a clock is required")
	case c.loggerSet && c.logger == nil:
		return c, errors.New("guard: WithLogger(nil): a logger is required (use slog.New(slog.DiscardHandler) to log nothing)")
	case c.storeSet && c.store == nil:
		return c, errors.New("guard: WithStore(nil): a store is required")
	case c.maxKeys < 0:
		return c, errors.New("guard: WithMaxKeys: the maximum number of keys must not be negative")
	case c.storeSet && c.maxKeysSet:
		return c, errors.New("guard: WithMaxKeys sets up the default memory store; it cannot be combined with WithStore (give NewMemoryStore the maximum instead)")
	}
	if !c.maxKeysSet {
		c.maxKeys = DefaultMaxKeys
	}
	if !c.loggerSet {
		c.logger = slog.Default()
	}
	return c, nil
}

type clockOption struct{ c clock.Clock }

func (o clockOption) apply(c *config) { c.clock = o.c }

// WithClock makes the guard read time from c instead of the real clock
// (clock.New()). Tests pass a *clock.Mock. A nil clock is an error.
func WithClock(c clock.Clock) Option { return clockOption{c} }

type loggerOption struct{ l *slog.Logger }

func (o loggerOption) apply(c *config) { c.logger, c.loggerSet = o.l, true }

// WithLogger sets the logger that receives the warning "key is over the
// usage limit" when a key is blocked. The default is slog.Default() as it is
// when New runs. A nil logger is an error.
func WithLogger(l *slog.Logger) Option { return loggerOption{l} }

type storeOption struct{ s Store }

func (o storeOption) apply(c *config) { c.store, c.storeSet = o.s, true }

// WithStore makes the guard keep its per-key state in s (for example a
// Redis store shared by several servers) instead of a new MemoryStore. A nil
// store is an error.
func WithStore(s Store) Option { return storeOption{s} }

type maxKeysOption struct{ n int }

func (o maxKeysOption) apply(c *config) { c.maxKeys, c.maxKeysSet = o.n, true }

// DefaultMaxKeys is the number of live keys the default memory store of a
// Guard holds unless WithMaxKeys says otherwise: about 15 MB of entries
// (some 150 bytes a key), and more distinct clients in one window than
// most servers see. It bounds the memory a flood of new keys (new source
// addresses, made-up user IDs) can take.
const DefaultMaxKeys = 100_000

// WithMaxKeys sets the number of live keys of the default memory store
// (default DefaultMaxKeys). When that many keys have a window or a block
// in force, a request of a new key is refused (Check returns an error
// wrapping both ErrLimited and rxthrottle.ErrTooManyKeys, with RetryAfter
// the time until the soonest key ends and makes room) and counts nowhere;
// the keys already live keep their state, so nobody's quota or block ends
// early. 0 means no bound: memory then grows with the number of keys live
// in a window. A negative n is an error, and so is combining it with
// WithStore.
func WithMaxKeys(n int) Option { return maxKeysOption{n} }

type onLimitedOption struct{ f func(string, Decision) }

func (o onLimitedOption) apply(c *config) { c.onLimited = o.f }

// OnLimited sets a hook called for every refused request, with its key and
// decision, on the goroutine that called Check and before Check returns.
// For the request that blocks a key it runs after the OnBlocked hook.
func OnLimited(f func(key string, d Decision)) Option { return onLimitedOption{f} }

type onBlockedOption struct{ f func(string, time.Time) }

func (o onBlockedOption) apply(c *config) { c.onBlocked = o.f }

// OnBlocked sets a hook called once each time a key is blocked, with the
// instant its block ends, on the goroutine that called Check and before
// Check returns.
func OnBlocked(f func(key string, until time.Time)) Option { return onBlockedOption{f} }
