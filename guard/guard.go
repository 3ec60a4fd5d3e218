// Package guard refuses the requests of a key (a user, an API token, a
// client address) that goes over a fixed-window quota, and keeps refusing
// them for a cool-down: the server side of a rate limit.
//
// Where the limiters of package rxthrottle make callers wait, a Guard never
// waits: Check returns a Decision at once, and an error wrapping ErrLimited
// for a refused request. Package httpthrottle turns it into HTTP middleware.
//
// The model, for a Policy{Limit: rxthrottle.Per(N, Window), Block}, key by
// key:
//
//   - A key's window starts at its first request and lasts Window; it holds
//     at most N allowed requests.
//   - The request that would be number N+1 is refused and blocks the key
//     until max(now+Block, end of the window).
//   - While blocked, every request of the key is refused with RetryAfter =
//     until-now. Refused requests are not counted and do not extend the block.
//   - At exactly the end of its window or block, a key is fresh: its next
//     request starts a new window.
//
// The per-key state lives in a Store: the MemoryStore by default, or a store
// shared by several servers (package redisstore). Each Check is one atomic
// Hit on the store.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
)

// Guard enforces one Policy over many keys. It is safe for concurrent use;
// build it with New.
type Guard struct {
	policy    Policy
	store     Store
	clock     clock.Clock
	logger    *slog.Logger
	onLimited func(string, Decision)
	onBlocked func(string, time.Time)

	checks, allowed, refused, errs, blocks, full atomic.Uint64
}

// New returns a Guard that enforces p. The options are WithClock,
// WithLogger, WithStore, WithMaxKeys, OnLimited and OnBlocked. An invalid
// policy (see Policy.Validate) or option is an error.
func New(p Policy, opts ...Option) (*Guard, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	if !c.storeSet {
		if c.store, err = NewMemoryStore(c.maxKeys); err != nil {
			return nil, err
		}
	}
	return &Guard{
		policy:    p,
		store:     c.store,
		clock:     c.clock,
		logger:    c.logger,
		onLimited: c.onLimited,
		onBlocked: c.onBlocked,
	}, nil
}

// Policy returns the policy the guard enforces.
func (g *Guard) Policy() Policy { return g.policy }

// Check counts one request of key and decides on it at the guard's clock's
// current time.
//
// For an allowed request it returns the decision and nil. For a refused one
// it returns the decision (Allowed false, RetryAfter set) and a
// *LimitedError wrapping ErrLimited. A request of a new key that the store
// has no room for (its maximum of live keys, WithMaxKeys) is refused too,
// uncounted, with RetryAfter the time until the soonest live key ends; its
// error wraps rxthrottle.ErrTooManyKeys as well. If key is empty, or the store fails, it
// returns a zero Decision and an error that does not wrap ErrLimited: the
// caller then chooses to fail open or closed.
//
// When the request blocks its key, Check logs a warning and calls the
// OnBlocked hook; for every refused request it calls the OnLimited hook.
func (g *Guard) Check(ctx context.Context, key string) (Decision, error) {
	if key == "" {
		return Decision{}, errors.New("guard: Check: empty key")
	}
	g.checks.Add(1)
	now := g.clock.Now()
	res, err := g.store.Hit(ctx, key, g.policy, now)
	if errors.Is(err, rxthrottle.ErrTooManyKeys) {
		return g.refuseFull(ctx, key, now, res, err)
	}
	if err != nil {
		g.errs.Add(1)
		return Decision{}, &checkError{key: key, err: err}
	}
	d := Decision{
		Allowed: res.Allowed,
		Limit:   g.policy.Limit,
		Reset:   res.Reset,
		ResetAt: now.Add(res.Reset),
	}
	if res.Allowed {
		g.allowed.Add(1)
		d.Remaining = max(g.policy.Limit.N-res.Count, 0)
		return d, nil
	}
	g.refused.Add(1)
	d.RetryAfter = res.Reset
	if res.Blocked {
		g.blocks.Add(1)
		g.logger.LogAttrs(ctx, slog.LevelWarn, "key is over the usage limit",
			slog.String("key", key),
			slog.Int("count", res.Count),
			slog.Int("limit", g.policy.Limit.N),
			slog.Duration("window", g.policy.Limit.Window),
			slog.Time("until", d.ResetAt),
		)
		if g.onBlocked != nil {
			g.onBlocked(key, d.ResetAt)
		}
	}
	if g.onLimited != nil {
		g.onLimited(key, d)
	}
	return d, &LimitedError{Key: key, RetryAfter: d.RetryAfter, Until: d.ResetAt}
}

// refuseFull refuses a request of a new key that the store has no room
// for: it is not counted anywhere, and it may retry when the soonest live
// key ends (res.Reset).
func (g *Guard) refuseFull(ctx context.Context, key string, now time.Time, res Result, err error) (Decision, error) {
	g.refused.Add(1)
	g.full.Add(1)
	d := Decision{Limit: g.policy.Limit, RetryAfter: res.Reset, Reset: res.Reset, ResetAt: now.Add(res.Reset)}
	if g.onLimited != nil {
		g.onLimited(key, d)
	}
	return d, &LimitedError{Key: key, RetryAfter: d.RetryAfter, Until: d.ResetAt, Full: err}
}

// checkError is the error of a Check the store could not decide: it names
// the key and wraps the store's error, without repeating "guard: " when the
// store is this package's MemoryStore.
type checkError struct {
	key string
	err error
}

func (e *checkError) Error() string {
	return fmt.Sprintf("guard: Check(%q): %s", e.key, strings.TrimPrefix(e.err.Error(), "guard: "))
}

func (e *checkError) Unwrap() error { return e.err }

// Stats returns a snapshot of the guard's counters. It allocates nothing and
// is safe to call concurrently with Check; the key counts come from the
// store when it implements KeyCounter.
func (g *Guard) Stats() Stats {
	s := Stats{
		Checks:  g.checks.Load(),
		Allowed: g.allowed.Load(),
		Refused: g.refused.Load(),
		Errors:  g.errs.Load(),
		Blocks:  g.blocks.Load(),
		Full:    g.full.Load(),
	}
	if kc, ok := g.store.(KeyCounter); ok {
		s.KeysLive, s.KeysBlocked = kc.Keys(g.clock.Now())
	}
	return s
}
