package rxthrottle

import "context"

// ThrottleChan returns a channel that delivers the values received from in
// within l's quota, in order, losing none, for code built on channels
// rather than rxgo. Each value waits for a token, in order; a value counts
// as emitted when the receiver has taken it from the returned channel (it
// holds its token until then, and the token renews one window after the
// receive), so a slow receiver cannot make the window leak: at most N
// values are received in any window. (A *Bucket holds it without a hold
// timeout, as Throttle does. Another Limiter's Token ends at its hold
// timeout, its HoldTimeout method's or DefaultHoldTimeout: a value not
// received within half of it gives its Token back unused and takes a
// new one before it is offered again, so that no value is received under
// a Token that has timed out.)
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
	r := renewalOf(l)
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
		if err := sendValue(ctx, l, r, out, v, n); err != nil {
			return err
		}
	}
}

// sendValue sends value n, v, to out with its token: from a *Bucket, an
// operator's hold (as Throttle's), which has no hold timeout, so that a
// receiver slower than the hold timeout cannot make the window leak, its
// emission recorded at a clock reading taken after the receive; from
// another Limiter, a Token of Acquire, changed for a new one before its
// hold can time out (sendHeld). A value never received gives its token
// back, as if it never departed.
func sendValue[T any](ctx context.Context, l Limiter, r renewal, out chan<- T, v T, n int) error {
	if b, ok := l.(*Bucket); ok {
		var g itemGate = b.items()
		if err := g.wait(ctx, true); err != nil {
			return streamError(ctx, "ThrottleChan", n, err)
		}
		select {
		case out <- v:
			g.flush(0, 0, 1)
			return nil
		case <-ctx.Done():
			g.giveBack()
			return ctx.Err()
		}
	}
	acquire := func() (Token, error) { return streamToken(ctx, "ThrottleChan", l, n) }
	tok, err := acquire()
	if err != nil {
		return err
	}
	switch sent, err := sendHeld(ctx, r, out, v, tok, r.clock.Now(), acquire); {
	case err != nil:
		return err
	case !sent:
		return ctx.Err()
	}
	return nil
}
