package redisstore

import (
	"context"

	"github.com/rxthrottle/rxthrottle"
)

// fallback is the in-memory limiter that FallbackLocal turns to; key is
// ignored by a single bucket.
type fallback interface {
	take(ctx context.Context, key string, n int, hold bool) (rxthrottle.Token, error)
	allow(ctx context.Context, key string, n int) (bool, error)
}

// bucketFallback and keyedFallback hold one pointer each, so that passing
// them as a fallback allocates nothing.
type (
	bucketFallback struct{ b *rxthrottle.Bucket }
	keyedFallback  struct{ k *rxthrottle.Keyed }
)

func (f bucketFallback) take(ctx context.Context, _ string, n int, hold bool) (rxthrottle.Token, error) {
	if hold {
		return f.b.AcquireN(ctx, n)
	}
	return rxthrottle.Token{}, f.b.WaitN(ctx, n)
}

func (f bucketFallback) allow(ctx context.Context, _ string, n int) (bool, error) {
	return f.b.AllowN(ctx, n)
}

func (f keyedFallback) take(ctx context.Context, key string, n int, hold bool) (rxthrottle.Token, error) {
	if hold {
		return f.k.AcquireN(ctx, key, n)
	}
	return rxthrottle.Token{}, f.k.WaitN(ctx, key, n)
}

func (f keyedFallback) allow(ctx context.Context, key string, n int) (bool, error) {
	return f.k.AllowN(ctx, key, n)
}

// localOptions are the options of FallbackLocal's in-memory limiter: the
// same limits, hold timeout and spacing, on the same clock.
func localOptions(cfg config) []rxthrottle.Option {
	opts := []rxthrottle.Option{rxthrottle.WithClock(cfg.clock), rxthrottle.WithHoldTimeout(cfg.holdTimeout)}
	if cfg.spacing > 0 {
		opts = append(opts, rxthrottle.WithSpacing(cfg.spacing))
	}
	for _, l := range cfg.limits {
		opts = append(opts, rxthrottle.WithLimit(l))
	}
	return opts
}
