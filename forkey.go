package rxthrottle

import (
	"context"
	"time"

	"github.com/benbjohnson/clock"
)

// ForKey returns the Limiter of key's schedule in k: every call goes to k
// with key. Use it to hand one user's or one host's quota to code that
// takes a Limiter, such as ThrottleWith or httpthrottle.NewTransport. Its
// SetLimit, Limits and Stats are k's own, over all keys, but for Stats'
// ConcurrencyCap, which is key's own if k reports one per key (a method
// ConcurrencyCap(key string) int, as Keyed's).
func ForKey(k KeyedLimiter, key string) Limiter { return keyLimiter{k, key} }

type keyLimiter struct {
	k   KeyedLimiter
	key string
}

func (l keyLimiter) Wait(ctx context.Context) error { return l.k.Wait(ctx, l.key) }
func (l keyLimiter) WaitN(ctx context.Context, n int) error {
	return l.k.WaitN(ctx, l.key, n)
}
func (l keyLimiter) Acquire(ctx context.Context) (Token, error) { return l.k.Acquire(ctx, l.key) }
func (l keyLimiter) AcquireN(ctx context.Context, n int) (Token, error) {
	return l.k.AcquireN(ctx, l.key, n)
}
func (l keyLimiter) Allow(ctx context.Context) (bool, error) { return l.k.Allow(ctx, l.key) }
func (l keyLimiter) AllowN(ctx context.Context, n int) (bool, error) {
	return l.k.AllowN(ctx, l.key, n)
}
func (l keyLimiter) Pause(until time.Time)                     { l.k.Pause(l.key, until) }
func (l keyLimiter) SetLimit(limit Limit, more ...Limit) error { return l.k.SetLimit(limit, more...) }
func (l keyLimiter) Limits() []Limit                           { return l.k.Limits() }

// HoldTimeout is k's (a method HoldTimeout() time.Duration, as Keyed's),
// else DefaultHoldTimeout, for the operators over l (holdTimeoutOf).
func (l keyLimiter) HoldTimeout() time.Duration {
	if h, ok := l.k.(interface{ HoldTimeout() time.Duration }); ok {
		return h.HoldTimeout()
	}
	return DefaultHoldTimeout
}

// holdClock is k's, if k is a Keyed of this package (holdTimeoutOf).
func (l keyLimiter) holdClock() clock.Clock {
	if c, ok := l.k.(holdClocker); ok {
		return c.holdClock()
	}
	return nil
}

func (l keyLimiter) Stats() Stats {
	st := l.k.Stats()
	if c, ok := l.k.(keyCapper); ok {
		st.ConcurrencyCap = c.ConcurrencyCap(l.key)
	}
	return st
}
