package rxthrottle

import (
	"fmt"

	"github.com/rxthrottle/rxthrottle/internal/kit"
)

// Kit returns what package limiterkit builds on: the options resolved,
// another package's options and Tokens made, which need this package's
// unexported state. It is for limiterkit, which imports this package (so
// this package cannot import it); its result's type is internal, and
// limiter builders use limiterkit's functions instead.
func Kit() kit.Root[Option, Limit, Event, Token] { return kitRoot{} }

// kitRoot is Kit's result.
type kitRoot struct{}

// Resolve is limiterkit.Resolve: opts over the defaults, every setting
// validated but the limits (the builder adds its first limit).
func (kitRoot) Resolve(opts []Option) (kit.Settings[Limit, Event], error) {
	c, err := applyOptions(nil, opts)
	if err != nil {
		return kit.Settings[Limit, Event]{}, err
	}
	return kit.Settings[Limit, Event]{
		Clock: c.clock, Limits: c.limits, OnWait: c.onWait, OnAdmit: c.onAdmit,
		HoldTimeout: c.holdTimeout, Spacing: c.spacing,
		MaxKeys: c.maxKeys, IdleMargin: c.idleMargin,
		Concurrency: c.metering.concurrency, MaxQueue: c.metering.maxQueue, MaxQueueSet: c.metering.maxQueueSet,
		KeyLimits: c.metering.keyLimits,
		AdaptMin:  adaptBound(c.metering.adaptSet, c.metering.adaptMin),
		AdaptMax:  adaptBound(c.metering.adaptSet, c.metering.adaptMax),
		Given:     c.given, Exts: c.exts,
	}, nil
}

// adaptBound is WithAdaptiveConcurrency's bound b if it was given, else 0.
func adaptBound(set bool, b int) int {
	if !set {
		return 0
	}
	return b
}

// NewOption is limiterkit.NewOption.
func (kitRoot) NewOption(e kit.Ext) Option { return extOption(e) }

// NewToken is limiterkit.NewToken.
func (kitRoot) NewToken(r kit.Releaser, id uint64) Token { return Token{r: r, id: id} }

// extOption is an option of another package (limiterkit.NewOption).
type extOption kit.Ext

func (o extOption) apply(c *config) { c.exts = append(c.exts, kit.Ext(o)) }

// optionName is the name of the function that made o, for errors: the
// package's name too, since limiterkit's users mix options of several
// packages.
func optionName(o Option) string {
	switch o := o.(type) {
	case extOption:
		return o.Name
	case clockOption:
		return "rxthrottle.WithClock"
	case limitOption:
		return "rxthrottle.WithLimit"
	case onWaitOption:
		return "rxthrottle.OnWait"
	case onAdmitOption:
		return "rxthrottle.OnAdmit"
	case maxKeysOption:
		return "rxthrottle.WithMaxKeys"
	case idleMarginOption:
		return "rxthrottle.WithIdleMargin"
	case holdTimeoutOption:
		return "rxthrottle.WithHoldTimeout"
	case spacingOption:
		return "rxthrottle.WithSpacing"
	case concurrencyOption:
		return "rxthrottle.WithConcurrency"
	case adaptiveOption:
		return "rxthrottle.WithAdaptiveConcurrency"
	case maxQueueOption:
		return "rxthrottle.WithMaxQueue"
	case keyLimitsOption:
		return "rxthrottle.WithKeyLimits"
	case inFlightBoundOption:
		return "rxthrottle.WithInFlightBound"
	case maxAttemptsOption:
		return "rxthrottle.WithMaxAttempts"
	case retryBudgetOption:
		return "rxthrottle.WithRetryBudget"
	}
	return fmt.Sprintf("%T", o)
}
