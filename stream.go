package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// What the iterator and channel throttles (seq.go, chan.go) share: their
// checks of the arguments, the token of each value, and the error that
// ended the latest run.

// streamErr is the error that ended a throttled stream's latest run, read
// by its err function. Safe for concurrent use.
type streamErr struct {
	mu  sync.Mutex
	err error
}

func (e *streamErr) set(err error) {
	e.mu.Lock()
	e.err = err
	e.mu.Unlock()
}

func (e *streamErr) get() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// checkStream returns the error for bad arguments of the stream throttle
// op, or nil.
func checkStream(op string, ctx context.Context, l Limiter, noSource bool) error {
	switch b, isBucket := l.(*Bucket); {
	case ctx == nil:
		return fmt.Errorf("rxthrottle: %s: nil context", op)
	case isNil(l):
		return fmt.Errorf("rxthrottle: %s(ctx, nil, ...): a Limiter is required", op)
	case isBucket:
		if err := usableBucket(op, b); err != nil {
			return err
		}
	}
	if noSource {
		return fmt.Errorf("rxthrottle: %s: the source is nil", op)
	}
	return nil
}

// streamToken takes a held token of l for value n (from 1) of the stream
// throttle op. ctx's end is returned as ctx.Err(); any other failure, or
// a panic of l, says which value got no token and wraps the cause.
func streamToken(ctx context.Context, op string, l Limiter, n int) (tok Token, err error) {
	defer func() {
		if r := recover(); r != nil {
			tok, err = Token{}, recovered(r, op+": the Limiter", n)
		}
	}()
	tok, err = l.Acquire(ctx)
	if err != nil {
		return Token{}, streamError(ctx, op, n, err)
	}
	return tok, nil
}

// streamError is the error that ends a stream whose value n got no token
// because of err: ctx.Err() if ctx ended, else err with the value's place.
func streamError(ctx context.Context, op string, n int, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return ctxErr
	}
	return fmt.Errorf("rxthrottle: %s: value #%d got no token: %w", op, n, err)
}
