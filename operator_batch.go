package rxthrottle

import (
	"context"

	"github.com/reactivex/rxgo/v2"
)

// batchEmitter forwards items through Throttle's own bucket when nothing
// but the emitter can see that bucket: no OnWait or OnAdmit hook, no
// spacing (usesBatches). It is the emitter's scheme (see emitter) with the
// locks taken in batches:
//
//   - Under one lock it holds every token free at its latest clock reading,
//     up to maxBatch, and then hands them to items without locking. A token
//     free at a reading is free at every later instant (nobody else takes
//     tokens from this bucket, and free tokens never become fewer as time
//     passes), so each item still goes at its arrival when a token is free
//     then, as SPEC's formula says; when none is, it takes the emitter's
//     path: a fresh reading, then a wait.
//   - Before it blocks (on the source or the downstream) it gives the items
//     sent since its last reading a timestamp, one clock read for all, and
//     keeps it without the lock; the timestamps are recorded under the next
//     lock, before any token is counted. A timestamp is a reading taken
//     after the items were received, so on the real clock it is never
//     earlier than their emission (the window can only be stricter), and on
//     virtual time, which only moves while every goroutine is blocked, it is
//     their emission.
//   - When the subscription ends it records what was emitted and gives the
//     tokens it held for no item back.
type batchEmitter struct {
	b       *Bucket
	seen    int             // items read, for error messages
	spare   int             // tokens held for no item yet
	lost    int             // of them, tokens of items the downstream never took
	pending int             // items sent since the latest stamp, not yet recorded
	stamps  []stamp         // items sent and stamped, not yet recorded
	known   int64           // the latest clock reading: now is no earlier
	done    <-chan struct{} // ctx.Done(): nil if ctx can never end
}

// stamp is n emissions at a clock reading taken after them.
type stamp struct {
	n  int
	at int64
}

// maxBatch bounds the tokens held at once for no item, and so the stamps
// kept between two locks.
const maxBatch = 64

func (e *batchEmitter) run(ctx context.Context, in <-chan rxgo.Item, next chan<- rxgo.Item) {
	e.known = e.b.now()
	e.done = ctx.Done()
	e.stamps = make([]stamp, 0, maxBatch)
	defer func() { e.b.settle(e.stamps, e.pending, e.spare, e.lost) }()
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
		if e.spare == 0 {
			if err := e.refill(ctx); err != nil {
				if !stopped(ctx) {
					rxgo.Error(errNoToken("Throttle", e.seen, err)).SendContext(ctx, next)
				}
				return
			}
		}
		e.spare--
		if !e.send(ctx, next, item) {
			e.spare++
			e.lost++
			return
		}
		e.pending++
	}
}

// stamp gives the items sent since the latest stamp a timestamp, without
// the lock.
func (e *batchEmitter) stamp() {
	if e.pending == 0 {
		return
	}
	at := e.b.now()
	e.known = at
	if n := len(e.stamps); n > 0 && e.stamps[n-1].at == at {
		e.stamps[n-1].n += e.pending
	} else {
		e.stamps = append(e.stamps, stamp{e.pending, at})
	}
	e.pending = 0
}

// receive takes the next item, stamping the items sent first if it has to
// wait for one.
func (e *batchEmitter) receive(ctx context.Context, in <-chan rxgo.Item) (rxgo.Item, bool) {
	select {
	case item, ok := <-in:
		return item, ok
	default:
	}
	e.stamp()
	if e.done == nil { // a select of one channel costs more than a receive
		item, ok := <-in
		return item, ok
	}
	select {
	case <-e.done:
		return rxgo.Item{}, false
	case item, ok := <-in:
		return item, ok
	}
}

// send hands item to the downstream, stamping the items sent before first
// if it has to wait.
func (e *batchEmitter) send(ctx context.Context, next chan<- rxgo.Item, item rxgo.Item) bool {
	select {
	case next <- item:
		return true
	default:
	}
	e.stamp()
	if e.done == nil {
		next <- item
		return true
	}
	return item.SendContext(ctx, next)
}

// refill holds tokens for the next items: those free at the latest reading,
// else those free at a fresh one, else one it waits for. The stamped
// emissions are recorded on the way, and the unstamped ones at the fresh
// reading (the emitter has not blocked since they were sent, so on virtual
// time that reading is their emission).
func (e *batchEmitter) refill(ctx context.Context) error {
	e.spare = e.b.holdFree(e.stamps, e.known)
	e.stamps = e.stamps[:0]
	if e.spare > 0 {
		return nil
	}
	e.known, e.spare = e.b.holdFreeNow(e.pending)
	e.pending = 0
	if e.spare > 0 {
		return nil
	}
	if err := e.b.wait(ctx, true); err != nil {
		return err
	}
	e.spare = 1
	return nil
}
