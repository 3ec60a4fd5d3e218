package rxthrottle

import (
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/kit"
)

// Option configures a Bucket, a Keyed limiter or a Throttle operator, and
// the limiters of other packages built with package limiterkit
// (redisstore's NewBucket takes WithLimit, OnAdmit... and options of its
// own, all Options). Each constructor documents which options it reads,
// and returns an error naming one it does not read (NewBucket given
// WithMaxKeys, or redisstore.WithTimeout...) rather than ignore it.
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

	holdTimeout time.Duration
	spacing     time.Duration

	keyedOnly string // the name of a Keyed-only option given, if any
	mapOnly   string // the name of the first ThrottleMap-only option given, if any

	metering meteringConfig // options_metering.go

	given []string  // every option's name, in order (optionName)
	exts  []kit.Ext // options of other packages (limiterkit.NewOption)
}

// DefaultHoldTimeout is how long a Token from Acquire may be held before
// the limiter ends the hold itself (WithHoldTimeout): long enough for a
// slow HTTP request, short enough that a Token nobody releases costs a
// minute of one token rather than the token forever.
const DefaultHoldTimeout = time.Minute

// buildConfig applies opts over the defaults and validates the result,
// limit and the limits of WithLimit included. An option of another package
// (limiterkit.NewOption) is an error: no limiter of this package reads one.
func buildConfig(limit Limit, opts []Option) (config, error) {
	c, err := applyOptions([]Limit{limit}, opts)
	if err != nil {
		return c, err
	}
	if len(c.exts) > 0 {
		return c, fmt.Errorf("rxthrottle: %s is an option of another package's limiters: rxthrottle's limiters do not read it", c.exts[0].Name)
	}
	if c.mapOnly != "" {
		return c, fmt.Errorf("rxthrottle: %s is an option of ThrottleMap and ThrottleMapWith only: a limiter does not read it", c.mapOnly)
	}
	c.limits, err = validLimits(c.limits[0], c.limits[1:]...)
	return c, err
}

// applyOptions applies opts over the defaults, after limits, and validates
// every setting but the limits (limiterkit.Resolve has no first limit).
func applyOptions(limits []Limit, opts []Option) (config, error) {
	c := config{clock: clock.New(), limits: limits, holdTimeout: DefaultHoldTimeout}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("rxthrottle: nil Option")
		}
		o.apply(&c)
		c.given = append(c.given, optionName(o))
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
	if c.holdTimeout <= 0 {
		return c, fmt.Errorf("rxthrottle: WithHoldTimeout(%v): the timeout must be positive", c.holdTimeout)
	}
	if c.spacing < 0 {
		return c, fmt.Errorf("rxthrottle: WithSpacing(%v): the spacing must not be negative", c.spacing)
	}
	if err := c.metering.validate(); err != nil {
		return c, err
	}
	return c, nil
}

// hooks returns the settings shared by the buckets built from c, with agg
// (nil outside Keyed).
func (c *config) hooks(agg *aggregate) *hooks {
	return &hooks{clock: c.clock, realClock: isRealClock(c.clock), onWait: c.onWait, onAdmit: c.onAdmit, agg: agg, holdTimeout: c.holdTimeout, spacing: c.spacing}
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
// wait. Hooks are called after the limiter has released its locks, on the
// goroutine that made the decision (the caller's, the limiter's timer, an
// operator's), so a hook may call back into the limiter; calls from
// different goroutines may run concurrently and in any order, so a hook
// must be safe for concurrent use. A hook that blocks delays that
// goroutine: a Wait caller whose OnWait blocks returns only after the hook
// does, even past its context's deadline, so keep hooks short. A hook that
// panics is recovered and logged (log/slog's default logger); the limiter is
// unaffected.
func OnWait(f func(Event)) Option { return onWaitOption{f} }

type onAdmitOption struct{ f func(Event) }

func (o onAdmitOption) apply(c *config) { c.onAdmit = o.f }

// OnAdmit sets a hook called for every admitted caller or item, with how long
// it waited. It is called as OnWait is: after the limiter's locks are
// released, panics recovered and logged. A caller granted by the limiter's
// timer may go on before its OnAdmit has run.
func OnAdmit(f func(Event)) Option { return onAdmitOption{f} }

type maxKeysOption int

func (o maxKeysOption) apply(c *config) { c.maxKeys, c.keyedOnly = int(o), "WithMaxKeys" }

// WithMaxKeys bounds the number of keys a Keyed limiter keeps (0, the
// default, is no bound). A new key beyond the bound first makes room by
// forgetting idle keys; if none is idle, its Wait fails with ErrTooManyKeys
// (and Allow returns false): forgetting a busy key would break its window.
func WithMaxKeys(n int) Option { return maxKeysOption(n) }

type idleMarginOption time.Duration

func (o idleMarginOption) apply(c *config) {
	c.idleMargin, c.keyedOnly = time.Duration(o), "WithIdleMargin"
}

// WithIdleMargin sets how long a Keyed limiter keeps a key after it has
// become idle (every token renewed, no pause, nobody waiting) before it may
// forget it. The default is 0: a forgotten key is indistinguishable from a
// fresh one, so the margin only trades memory for fewer re-creations.
func WithIdleMargin(d time.Duration) Option { return idleMarginOption(d) }

type holdTimeoutOption time.Duration

func (o holdTimeoutOption) apply(c *config) { c.holdTimeout = time.Duration(o) }

// WithHoldTimeout bounds how long a Token from Acquire counts as held: a
// Token not released d after its departure is released by the limiter at
// departure + d, and renews W after that, so a caller that never calls
// Release or Cancel cannot keep a token forever. A Release after the timeout
// changes nothing. Choose d above the longest work a token pays for (an HTTP
// client's timeout); the default is DefaultHoldTimeout. d must be positive.
func WithHoldTimeout(d time.Duration) Option { return holdTimeoutOption(d) }

type spacingOption time.Duration

func (o spacingOption) apply(c *config) { c.spacing = time.Duration(o) }

// WithSpacing sets a minimum gap d between consecutive departures (SPEC.md,
// "Spacing"), on top of the limits: with d = W/N calls are spread evenly,
// which helps against servers that estimate with a sliding-window counter
// and refuse bursts that an exact count would accept. The gap is between
// calls: an AcquireN or WaitN of n tokens is one departure. 0, the default,
// adds nothing; a negative d is an error at construction.
func WithSpacing(d time.Duration) Option { return spacingOption(d) }
