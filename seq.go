package rxthrottle

import (
	"context"
	"iter"
)

// ThrottleSeq returns an iterator over the values of seq within l's quota,
// for code that uses Go's iterators rather than rxgo: each value waits for
// a token, in order, and the body of the range loop runs while the token
// is held. The token is released when the body has run (when the loop
// asks for the next value, or ends), so it renews one window after the
// work the body did, not after it started (SPEC.md, "Held tokens"): a
// body that calls an API keeps the server's count within the quota,
// however long its requests take to arrive. Nothing is dropped, and at
// most N bodies start in any window. A loop body runs one value at a time:
// for calls running at once, see ThrottleMap or ThrottleChan.
//
// The iteration ends when seq ends, when the loop breaks, or when a value
// gets no token: ctx ended while it waited (err returns ctx.Err()), or l
// refused or failed it (err returns an error that says which value got no
// token and wraps l's). A refusal by ctx's deadline is of the second kind:
// when the deadline comes no later than the earliest instant the value
// could go, l refuses it at once, before ctx has ended, and err wraps both
// ErrDeadline and context.DeadlineExceeded (SPEC.md, "Deadlines"). The
// value that got no token is never yielded. ctx bounds the waits for
// tokens only; seq's own waits are seq's. err reports how the latest
// iteration ended: nil if seq ended or the loop broke. With a nil ctx, l
// or seq, the iterator yields nothing and err says what is wrong.
//
// The returned iterator may be ranged over more than once, each time
// ranging over seq anew; every value takes a token of l.
func ThrottleSeq[T any](ctx context.Context, l Limiter, seq iter.Seq[T]) (values iter.Seq[T], err func() error) {
	st := new(streamErr)
	if e := checkStream("ThrottleSeq", ctx, l, seq == nil); e != nil {
		st.set(e)
		return func(func(T) bool) {}, st.get
	}
	return func(yield func(T) bool) {
		st.set(nil)
		n := 0
		for v := range seq {
			n++
			tok, err := streamToken(ctx, "ThrottleSeq", l, n)
			if err != nil {
				st.set(err)
				return
			}
			if !yieldHeld(tok, func() bool { return yield(v) }) {
				return
			}
		}
	}, st.get
}

// ThrottleSeq2 is ThrottleSeq for an iter.Seq2 (such as maps.All or
// slices.All): each pair takes one token, held while the loop body runs.
// Its iteration ends, and err reports, as ThrottleSeq's do.
func ThrottleSeq2[K, V any](ctx context.Context, l Limiter, seq iter.Seq2[K, V]) (pairs iter.Seq2[K, V], err func() error) {
	st := new(streamErr)
	if e := checkStream("ThrottleSeq2", ctx, l, seq == nil); e != nil {
		st.set(e)
		return func(func(K, V) bool) {}, st.get
	}
	return func(yield func(K, V) bool) {
		st.set(nil)
		n := 0
		for k, v := range seq {
			n++
			tok, err := streamToken(ctx, "ThrottleSeq2", l, n)
			if err != nil {
				st.set(err)
				return
			}
			if !yieldHeld(tok, func() bool { return yield(k, v) }) {
				return
			}
		}
	}, st.get
}

// yieldHeld runs the loop body (through yield) with tok held, and releases
// tok when it returns, even by a panic: the work it paid for may have been
// done.
func yieldHeld(tok Token, yield func() bool) bool {
	defer tok.Release()
	return yield()
}
