package rxthrottle

import (
	"fmt"

	"github.com/rxthrottle/rxthrottle/internal/optlink"
)

// The link to package limiterkit, which imports this package: see
// internal/optlink.
func init() {
	optlink.Resolve = resolveOptions
	optlink.NewOption = func(e optlink.Ext) Option { return extOption(e) }
}

// resolveOptions is limiterkit.Resolve: opts over the defaults, every
// setting validated but the limits (the builder adds its first limit).
func resolveOptions(opts []Option) (optlink.Settings[Limit, Event], error) {
	c, err := applyOptions(nil, opts)
	if err != nil {
		return optlink.Settings[Limit, Event]{}, err
	}
	return optlink.Settings[Limit, Event]{
		Clock: c.clock, Limits: c.limits, OnWait: c.onWait, OnAdmit: c.onAdmit,
		HoldTimeout: c.holdTimeout, Spacing: c.spacing,
		MaxKeys: c.maxKeys, IdleMargin: c.idleMargin,
		Concurrency: c.metering.concurrency, MaxQueue: c.metering.maxQueue, MaxQueueSet: c.metering.maxQueueSet,
		KeyLimits: c.metering.keyLimits,
		Given:     c.given, Exts: c.exts,
	}, nil
}

// extOption is an option of another package (limiterkit.NewOption).
type extOption optlink.Ext

func (o extOption) apply(c *config) { c.exts = append(c.exts, optlink.Ext(o)) }

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
	case maxQueueOption:
		return "rxthrottle.WithMaxQueue"
	case keyLimitsOption:
		return "rxthrottle.WithKeyLimits"
	case inFlightBoundOption:
		return "rxthrottle.WithInFlightBound"
	case maxAttemptsOption:
		return "rxthrottle.WithMaxAttempts"
	}
	return fmt.Sprintf("%T", o)
}
