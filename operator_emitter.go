package rxthrottle

import (
	"context"

	"github.com/reactivex/rxgo/v2"
)

// emitter forwards items through a *Bucket (its itemGate) and records each emission when
// the downstream has received the item, reading the clock and taking the
// lock as seldom as that allows: on a virtual machine a clock read can cost
// a tenth of a channel hand-over.
//
// After a send, the item's token stays held (pending) instead of being
// recorded at once. The pending tokens get a timestamp, one clock read for
// all, before the emitter blocks (on the source, the downstream or a token)
// and when the tokens known to be free run out. A timestamp is never earlier
// than the true emission, so the window can only be stricter; and on virtual
// time, which only moves while every goroutine is blocked, it is exact.
//
// On a shared bucket the pending tokens are recorded before the emitter
// blocks, so that other callers see them renew. On a private one, before it
// blocks on the source, the emitter only reads the clock (stamp) and records
// them with the next token it takes, under the same lock. Throttle's own
// bucket is private; ThrottleWith's is shared.
type emitter struct {
	g       itemGate // the bucket's
	private bool     // no one else uses the bucket
	op      string   // for error messages
	seen    int      // items read, for error messages
	pending int      // tokens of items sent but not yet recorded
	stamped int      // how many of the oldest pending ones stampAt covers
	stampAt int64    // a clock reading taken after their emission
	known   int64    // the latest clock reading: now is no earlier
}

func (e *emitter) run(ctx context.Context, in <-chan rxgo.Item, next chan<- rxgo.Item) {
	e.known = e.g.now()
	defer e.flush()
	for {
		item, ok := e.receive(ctx, in)
		if !ok {
			return
		}
		e.seen++
		if item.Error() { // an error item takes no token
			if !e.send(ctx, next, item) {
				return
			}
			continue
		}
		if err := e.acquire(ctx); err != nil {
			if !stopped(ctx) {
				e.flush()
				rxgo.Error(errNoToken(e.op, e.seen, err)).SendContext(ctx, next)
			}
			return
		}
		if !e.send(ctx, next, item) {
			e.g.giveBack()
			return
		}
		e.pending++
	}
}

// flush records the pending emissions: the stamped ones at their stamp, the
// others at a fresh clock reading.
func (e *emitter) flush() {
	if e.pending > 0 {
		e.known = e.g.flush(e.stamped, e.stampAt, e.pending-e.stamped)
		e.pending, e.stamped = 0, 0
	}
}

// stamp gives the pending emissions a timestamp without taking the lock. A
// second stamp while the first is unrecorded would have to be later than
// some of them, so it records the first instead.
func (e *emitter) stamp() {
	switch {
	case e.pending == e.stamped:
	case e.stamped > 0:
		e.flush()
	default:
		e.stampAt = e.g.now()
		e.known, e.stamped = e.stampAt, e.pending
	}
}

// receive takes the next item, readying the pending emissions first if it
// has to wait for one.
func (e *emitter) receive(ctx context.Context, in <-chan rxgo.Item) (rxgo.Item, bool) {
	select {
	case item, ok := <-in:
		return item, ok
	default:
	}
	if e.private {
		e.stamp()
	} else {
		e.flush()
	}
	select {
	case <-ctx.Done():
		return rxgo.Item{}, false
	case item, ok := <-in:
		return item, ok
	}
}

// acquire holds a token for the next item: without reading the clock if one
// was free at the last reading, else after a fresh reading, else by waiting.
// Stamped emissions are recorded on the way, under the same lock.
func (e *emitter) acquire(ctx context.Context) error {
	ok := e.g.tryHold(e.stamped, e.stampAt, e.known)
	e.pending -= e.stamped
	e.stamped = 0
	if ok {
		return nil
	}
	if e.pending > 0 {
		e.flush()
	} else {
		e.known = e.g.now()
	}
	if e.g.tryHold(0, 0, e.known) {
		return nil
	}
	return e.g.wait(ctx, true)
}

// send hands item to the downstream, recording the pending emissions first
// if it has to wait.
func (e *emitter) send(ctx context.Context, next chan<- rxgo.Item, item rxgo.Item) bool {
	select {
	case next <- item:
		return true
	default:
	}
	e.flush()
	return item.SendContext(ctx, next)
}
