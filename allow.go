package rxthrottle

import "context"

// Allow takes a token and returns true if one is free now and nobody is
// waiting; otherwise it returns false at once and changes nothing. It never
// jumps the queue. The error is non-nil only for a nil ctx, an ended ctx,
// or a Bucket not made by NewBucket; the signature is the Limiter's, so
// that a Redis-backed limiter, whose Allow can fail, is a drop-in.
func (b *Bucket) Allow(ctx context.Context) (bool, error) { return b.AllowN(ctx, 1) }

// AllowN is Allow for n tokens at once. n < 1 or n above the smallest N of
// the limits is an error wrapping ErrInvalidCost.
func (b *Bucket) AllowN(ctx context.Context, n int) (bool, error) {
	if err := b.usable(); err != nil {
		return false, err
	}
	if ctx == nil {
		return false, errNilContext
	}
	b.mu.Lock()
	defer b.unlock()
	if err := b.checkCostLocked("AllowN", n); err != nil {
		return false, err // before ctx: a bad argument comes first
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	_, ok := b.takeLocked(b.now(), n, grantRecord)
	return ok, nil
}
