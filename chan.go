package rxthrottle

import "context"

// ThrottleChan returns a channel that delivers the values received from in
// within l's quota, in order, losing none, for code built on channels
// rather than rxgo. Each value waits for a token, in order; a value counts
// as emitted when the receiver has taken it from the returned channel (it
// holds its token until then, and the token renews one window after the
// receive), so a slow receiver cannot make the window leak: at most N
// values are received in any window. (A *Bucket holds it without a hold
// timeout, as Throttle does; another Limiter's Token ends at its hold
// timeout.)
//
// One goroutine reads in, one value at a time, and sends on the returned
// channel, which is unbuffered. It closes the channel once in is closed
// and drained, or when a value gets no token, or when ctx ends: err then
// returns nil (in closed), ctx.Err(), or an error that says which value
// got no token and wraps l's. With a *Bucket a value keeps its place
// whatever ctx's deadline, as Throttle's items do, until it goes or ctx
// ends. Another Limiter refuses a value whose deadline comes no later than
// the earliest instant it could go, at once, before ctx has ended (SPEC.md,
// "Deadlines"): that is of the last kind, its error wrapping both
// ErrDeadline and context.DeadlineExceeded. A value received from in but not delivered
// (ctx ended first) gives its token back unused. Call err after the
// channel is closed. The goroutine ends with the channel; values still in
// in are left there, so give in's producer the same ctx. With a nil ctx, l
// or in, the channel is closed at once and err says what is wrong.
func ThrottleChan[T any](ctx context.Context, l Limiter, in <-chan T) (values <-chan T, err func() error) {
	st := new(streamErr)
	out := make(chan T)
	if e := checkStream("ThrottleChan", ctx, l, in == nil); e != nil {
		st.set(e)
		close(out)
		return out, st.get
	}
	go func() {
		defer close(out)
		st.set(forward(ctx, l, in, out))
	}()
	return out, st.get
}

// forward moves the values of in to out, each with a token of l held until
// out's receiver has taken it, and returns what ended it.
func forward[T any](ctx context.Context, l Limiter, in <-chan T, out chan<- T) error {
	for n := 1; ; n++ {
		var v T
		select {
		case <-ctx.Done():
			return ctx.Err()
		case x, ok := <-in:
			if !ok {
				return nil
			}
			v = x
		}
		delivered, undelivered, err := chanToken(ctx, l, n)
		if err != nil {
			return err
		}
		select {
		case out <- v:
			delivered()
		case <-ctx.Done():
			undelivered() // as if it never departed
			return ctx.Err()
		}
	}
}

// chanToken takes the token of value n: from a *Bucket, an operator's
// hold (as Throttle's), which has no hold timeout, so that a receiver
// slower than the hold timeout cannot make the window leak; from another
// Limiter, a Token of Acquire. delivered records the value's emission at a
// clock reading taken after the receive; undelivered gives the token back.
func chanToken(ctx context.Context, l Limiter, n int) (delivered, undelivered func(), err error) {
	if b, ok := l.(*Bucket); ok {
		var g itemGate = b.items()
		if err := g.wait(ctx, true); err != nil {
			return nil, nil, streamError(ctx, "ThrottleChan", n, err)
		}
		return func() { g.flush(0, 0, 1) }, g.giveBack, nil
	}
	tok, err := streamToken(ctx, "ThrottleChan", l, n)
	if err != nil {
		return nil, nil, err
	}
	return tok.Release, tok.Cancel, nil
}
