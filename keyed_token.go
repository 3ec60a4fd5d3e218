package rxthrottle

import (
	"context"
	"errors"
	"hash/maphash"
)

// errKeyedNotBuilt is returned by the methods of a nil or zero Keyed.
var errKeyedNotBuilt = errors.New("rxthrottle: Keyed is nil or was not made by NewKeyed")

// usable returns errKeyedNotBuilt for a nil or zero Keyed.
func (k *Keyed) usable() error {
	if k == nil || k.clock == nil {
		return errKeyedNotBuilt
	}
	return nil
}

// WaitN is Wait for a caller of key that costs n tokens: it waits, in FIFO
// order with the key's other callers, until n tokens are free at once and
// takes them all. n < 1 or n above the smallest N is an error wrapping
// ErrInvalidCost, at once.
func (k *Keyed) WaitN(ctx context.Context, key string, n int) error {
	_, _, err := k.waitN(ctx, key, n, grantRecord, "WaitN")
	return err
}

// Acquire waits like Wait on key's schedule and returns the token held:
// it renews one window after Token.Release (or the hold timeout), as
// Bucket.Acquire's does.
func (k *Keyed) Acquire(ctx context.Context, key string) (Token, error) {
	return k.AcquireN(ctx, key, 1)
}

// AcquireN is Acquire for n tokens at once, as Bucket.AcquireN.
func (k *Keyed) AcquireN(ctx context.Context, key string, n int) (Token, error) {
	b, id, err := k.waitN(ctx, key, n, grantToken, "AcquireN")
	if err != nil {
		return Token{}, err
	}
	return Token{r: (*bucketTokens)(b), id: id}, nil
}

// waitN waits for n tokens of key granted as kind; it returns the key's
// bucket and, for grantToken, the hold's id.
func (k *Keyed) waitN(ctx context.Context, key string, n int, kind grantKind, op string) (*Bucket, uint64, error) {
	if err := k.usable(); err != nil {
		return nil, 0, err
	}
	if ctx == nil {
		return nil, 0, errNilContext
	}
	if ctx.Err() != nil {
		return nil, 0, k.ended(ctx, key, n, op, true)
	}
	var (
		b       *Bucket
		id      uint64
		ok      bool
		costErr error
	)
	err := k.with(key, true, func(kb *Bucket, now int64) {
		b = kb
		if kind == grantRecord && n == 1 && kb.takeOneLocked(now) {
			ok = true // Wait's hot path
			return
		}
		if costErr = kb.checkCostLocked(op, n); costErr == nil {
			id, ok = kb.takeLocked(now, n, kind)
		}
	})
	switch {
	case err != nil:
		return nil, 0, err
	case costErr != nil:
		return nil, 0, costErr
	case ok:
		return b, id, nil
	}
	// The caller has to wait, or goes before waiters of lower priority:
	// what its context says decides, read with no lock held.
	a := arrivalOf(ctx)
	var w *waiter
	err = k.with(key, true, func(kb *Bucket, now int64) {
		b = kb
		if costErr = kb.checkCostLocked(op, n); costErr == nil { // a SetLimit may have come
			w, id, costErr = kb.arriveLocked(now, n, kind, a, op, false)
		}
	})
	switch {
	case err != nil:
		return nil, 0, err
	case costErr != nil:
		return nil, 0, costErr
	case w == nil:
		return b, id, nil
	}
	if err := b.await(ctx, w); err != nil {
		return nil, 0, err
	}
	return b, w.Token, nil
}

// ended is Bucket.ended for a caller of key: an empty key or a cost out
// of range for key is its error, counted nowhere, without making the key
// (a live key's limits decide, else its tier's or the limiter's); any
// other caller gets ctx's error, counted as cancelled if count (not for
// an Allow, which never waits).
func (k *Keyed) ended(ctx context.Context, key string, n int, op string, count bool) error {
	if key == "" {
		return errEmptyKey
	}
	h := maphash.String(k.seed, key)
	s := &k.shards[h%keyedShards]
	if n != 1 { // every limit has N >= 1
		if err := k.costErr(s, h, key, op, n); err != nil {
			return err
		}
	}
	if count {
		s.agg.cancelled.Add(1)
	}
	return ctx.Err()
}

// costErr returns the error of n tokens for key, whose hash is h in shard
// s, if they are no valid cost, without making the key.
func (k *Keyed) costErr(s *shard, h uint64, key, op string, n int) error {
	if t := s.table.Load(); t != nil {
		if e := t.find(h, key); e != nil && e.lockLive() {
			err := e.checkCostLocked(op, n)
			e.unlock()
			return err
		}
	}
	limits, err := k.tierOf(key)
	if err != nil {
		return err
	}
	if limits == nil {
		limits = *k.limits.Load()
	}
	minN := limits[0].N
	for _, l := range limits[1:] {
		minN = min(minN, l.N)
	}
	return refuse.Cost(op, n, minN)
}

// Allow takes a token of key and returns true if one is free now and nobody
// of that key waits; otherwise it returns false and changes nothing. An
// empty key, a new key beyond WithMaxKeys (ErrTooManyKeys), a nil or ended
// ctx are errors.
func (k *Keyed) Allow(ctx context.Context, key string) (bool, error) {
	return k.AllowN(ctx, key, 1)
}

// AllowN is Allow for n tokens of key at once; n < 1 or n above the
// smallest N is an error wrapping ErrInvalidCost.
func (k *Keyed) AllowN(ctx context.Context, key string, n int) (bool, error) {
	if err := k.usable(); err != nil {
		return false, err
	}
	if ctx == nil {
		return false, errNilContext
	}
	if ctx.Err() != nil {
		return false, k.ended(ctx, key, n, "AllowN", false)
	}
	var (
		ok      bool
		costErr error
	)
	err := k.with(key, true, func(b *Bucket, now int64) {
		if costErr = b.checkCostLocked("AllowN", n); costErr == nil {
			_, ok = b.takeLocked(now, n, grantRecord)
		}
	})
	if err == nil {
		err = costErr
	}
	return ok, err
}
