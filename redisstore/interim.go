package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/rxthrottle/rxthrottle"
)

// This file makes the Redis limiters satisfy the widened rxthrottle.Limiter
// and KeyedLimiter while held tokens, weights and SetLimit are built into
// the scripts: what the scripts cannot do yet fails at once with an error
// wrapping errors.ErrUnsupported, never silently.

func unsupported(op string) error {
	return fmt.Errorf("redisstore: %s is not supported yet: %w", op, errors.ErrUnsupported)
}

// WaitN is Wait for n tokens; only n = 1 is supported yet.
func (b *Bucket) WaitN(ctx context.Context, n int) error {
	if n != 1 {
		return unsupported("WaitN with n != 1")
	}
	return b.Wait(ctx)
}

// Acquire is not supported yet.
func (b *Bucket) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, unsupported("Acquire")
}

// AcquireN is not supported yet.
func (b *Bucket) AcquireN(ctx context.Context, n int) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, unsupported("AcquireN")
}

// AllowN is Allow for n tokens; only n = 1 is supported yet.
func (b *Bucket) AllowN(ctx context.Context, n int) (bool, error) {
	if n != 1 {
		return false, unsupported("AllowN with n != 1")
	}
	return b.Allow(ctx)
}

// SetLimit is not supported yet.
func (b *Bucket) SetLimit(rxthrottle.Limit, ...rxthrottle.Limit) error {
	return unsupported("SetLimit")
}

// WaitN is Wait for n tokens of key; only n = 1 is supported yet.
func (k *Keyed) WaitN(ctx context.Context, key string, n int) error {
	if n != 1 {
		return unsupported("WaitN with n != 1")
	}
	return k.Wait(ctx, key)
}

// Acquire is not supported yet.
func (k *Keyed) Acquire(ctx context.Context, key string) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, unsupported("Acquire")
}

// AcquireN is not supported yet.
func (k *Keyed) AcquireN(ctx context.Context, key string, n int) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, unsupported("AcquireN")
}

// AllowN is Allow for n tokens of key; only n = 1 is supported yet.
func (k *Keyed) AllowN(ctx context.Context, key string, n int) (bool, error) {
	if n != 1 {
		return false, unsupported("AllowN with n != 1")
	}
	return k.Allow(ctx, key)
}

// SetLimit is not supported yet.
func (k *Keyed) SetLimit(rxthrottle.Limit, ...rxthrottle.Limit) error {
	return unsupported("SetLimit")
}
