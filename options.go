package rxthrottle

import (
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
)

// Option configures a Bucket, a Keyed limiter or a Throttle operator.
// Each constructor documents which options it reads; the others are ignored.
type Option interface {
	apply(*config)
}

// config holds every option's value; buildConfig sets the defaults.
type config struct {
	clock      clock.Clock
	limits     []Limit // extra limits from WithLimit
	onWait     func(Event)
	onAdmit    func(Event)
	maxKeys    int
	idleMargin time.Duration
}

// buildConfig applies opts over the defaults and validates the result,
// limit and the limits of WithLimit included.
func buildConfig(limit Limit, opts []Option) (config, error) {
	c := config{clock: clock.New(), limits: []Limit{limit}}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("rxthrottle: nil Option")
		}
		o.apply(&c)
	}
	if c.clock == nil {
		return c, errors.New("rxthrottle: WithClock(nil): a clock is required")
	}
	if c.maxKeys < 0 {
		return c, fmt.Errorf("rxthrottle: WithMaxKeys(%d): the bound must be positive, or 0 for none", c.maxKeys)
	}
	if c.idleMargin < 0 {
		return c, fmt.Errorf("rxthrottle: WithIdleMargin(%v): the margin must not be negative", c.idleMargin)
	}
	var err error
	c.limits, err = validLimits(c.limits[0], c.limits[1:]...)
	return c, err
}

// Event describes one caller or item at a hook (OnWait, OnAdmit).
type Event struct {
	// Key is the caller's key for a keyed limiter, "" otherwise.
	Key string
	// Arrived is when the caller reached the limiter.
	Arrived time.Time
	// Wait is how long the caller waited (OnAdmit) or 0 (OnWait).
	Wait time.Duration
}

type clockOption struct{ c clock.Clock }

func (o clockOption) apply(c *config) { c.clock = o.c }

// WithClock makes the limiter read time from c instead of the real clock
// (clock.New()). Tests pass a *clock.Mock, or run on the real clock inside a
// testing/synctest bubble. A nil clock is an error at construction.
func WithClock(c clock.Clock) Option { return clockOption{c} }

type limitOption struct{ l Limit }

func (o limitOption) apply(c *config) { c.limits = append(c.limits, o.l) }

// WithLimit adds a limit that must hold at the same time as the first one:
// NewBucket(Per(5, time.Second), WithLimit(Per(100, time.Minute))) admits at
// most 5 items in any second and 100 in any minute.
func WithLimit(l Limit) Option { return limitOption{l} }

type onWaitOption struct{ f func(Event) }

func (o onWaitOption) apply(c *config) { c.onWait = o.f }

// OnWait sets a hook called when a caller finds no free token and starts to
// wait. It runs with the limiter's lock held: keep it short and never call
// back into the limiter.
func OnWait(f func(Event)) Option { return onWaitOption{f} }

type onAdmitOption struct{ f func(Event) }

func (o onAdmitOption) apply(c *config) { c.onAdmit = o.f }

// OnAdmit sets a hook called for every admitted caller or item, with how long
// it waited. It runs with the limiter's lock held: keep it short and never
// call back into the limiter.
func OnAdmit(f func(Event)) Option { return onAdmitOption{f} }

type maxKeysOption int

func (o maxKeysOption) apply(c *config) { c.maxKeys = int(o) }

// WithMaxKeys bounds the number of keys a Keyed limiter keeps (0, the
// default, is no bound). A new key beyond the bound first makes room by
// forgetting idle keys; if none is idle, its Wait fails with ErrTooManyKeys
// (and Allow returns false): forgetting a busy key would break its window.
func WithMaxKeys(n int) Option { return maxKeysOption(n) }

type idleMarginOption time.Duration

func (o idleMarginOption) apply(c *config) { c.idleMargin = time.Duration(o) }

// WithIdleMargin sets how long a Keyed limiter keeps a key after it has
// become idle (every token renewed, no pause, nobody waiting) before it may
// forget it. The default is 0: a forgotten key is indistinguishable from a
// fresh one, so the margin only trades memory for fewer re-creations.
func WithIdleMargin(d time.Duration) Option { return idleMarginOption(d) }
