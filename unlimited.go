package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Unlimited returns a Limiter that never waits: every Wait, Acquire and
// Allow goes at once, whatever the cost, and its Tokens need no Release.
// Use it in tests and to switch throttling off by configuration while
// keeping the code that takes a Limiter (x/time/rate's rate.Inf, uber's
// NewUnlimited). Its Stats count the admissions (Admitted); its other
// counters stay 0. A nil or ended context is still an error, as for every
// Limiter, and a cost below 1 wraps ErrInvalidCost. It has no limits:
// Limits returns nil, SetLimit returns an error and Pause does nothing.
// It is safe for concurrent use.
func Unlimited() Limiter { return new(unlimited) }

type unlimited struct{ admitted atomic.Uint64 }

var errUnlimitedSetLimit = errors.New("rxthrottle: SetLimit on Unlimited(): it has no limits to set")

func (u *unlimited) admit(ctx context.Context, op string, n int) error {
	if ctx == nil {
		return errNilContext
	}
	if n < 1 {
		return fmt.Errorf("rxthrottle: Unlimited().%s(n=%d): n must be at least 1: %w", op, n, ErrInvalidCost)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	u.admitted.Add(1)
	return nil
}

func (u *unlimited) Wait(ctx context.Context) error         { return u.admit(ctx, "Wait", 1) }
func (u *unlimited) WaitN(ctx context.Context, n int) error { return u.admit(ctx, "WaitN", n) }

func (u *unlimited) Acquire(ctx context.Context) (Token, error) { return u.AcquireN(ctx, 1) }

func (u *unlimited) AcquireN(ctx context.Context, n int) (Token, error) {
	return Token{}, u.admit(ctx, "AcquireN", n)
}

func (u *unlimited) Allow(ctx context.Context) (bool, error) { return u.AllowN(ctx, 1) }

func (u *unlimited) AllowN(ctx context.Context, n int) (bool, error) {
	err := u.admit(ctx, "AllowN", n)
	return err == nil, err
}

func (u *unlimited) Pause(time.Time) {}

func (u *unlimited) SetLimit(Limit, ...Limit) error { return errUnlimitedSetLimit }

func (u *unlimited) Limits() []Limit { return nil }

func (u *unlimited) Stats() Stats { return Stats{Admitted: u.admitted.Load()} }
