package rxthrottle

import (
	"context"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/admission"
)

// How a Bucket takes tokens for a caller: at once if they are free and
// nobody waits (takeLocked), else through its front (arriveLocked), and
// what an admission records and counts (admitLocked).

// waitN waits for n tokens granted as kind and returns the hold's id for
// grantToken. op names the method in errors; an operator's item (exempt)
// keeps its place whatever its context's deadline and the queue bound.
func (b *Bucket) waitN(ctx context.Context, n int, kind grantKind, op string, exempt bool) (uint64, error) {
	if err := b.usable(); err != nil {
		return 0, err
	}
	if ctx == nil {
		return 0, errNilContext
	}
	if ctx.Err() != nil {
		return 0, b.ended(ctx, op, n)
	}
	b.mu.Lock()
	if kind == grantRecord && n == 1 && b.takeOneLocked(b.now()) {
		b.unlock()
		return 0, nil
	}
	if err := b.checkCostLocked(op, n); err != nil {
		b.mu.Unlock()
		return 0, err
	}
	id, ok := b.takeLocked(b.now(), n, kind)
	b.unlock()
	if ok {
		return id, nil
	}
	// The caller has to wait, or goes before waiters of lower priority:
	// what its context says decides, read with no lock held.
	a := arrivalOf(ctx)
	b.mu.Lock()
	w, id, err := b.arriveLocked(b.now(), n, kind, a, op, exempt)
	b.unlock()
	if err != nil || w == nil {
		return id, err
	}
	if err := b.await(ctx, w); err != nil {
		return 0, err
	}
	return w.Token, nil
}

// ended ends a caller whose context had ended when it called. A cost out
// of range is a bad argument, refused first as with a live context (SPEC.md,
// "Weights"), and counts nowhere; any other such caller counts as
// cancelled (Stats), as one cancelled while it waits, and gets ctx's
// error. Wait's free path never comes here: it runs for a live context
// only.
func (b *Bucket) ended(ctx context.Context, op string, n int) error {
	b.mu.Lock()
	err := b.checkCostLocked(op, n)
	if err == nil {
		b.countCancelLocked()
	}
	b.unlock()
	if err != nil {
		return err
	}
	return ctx.Err()
}

// takeLocked grants n tokens as kind to a caller arriving at now if they are
// free (and, for a hold, a place under WithConcurrency's cap) and nobody
// waits; otherwise it changes nothing and returns false. Requires b.mu.
func (b *Bucket) takeLocked(now int64, n int, kind grantKind) (id uint64, ok bool) {
	b.expireHoldsLocked(now)
	if b.waitingLocked() > 0 || b.freeAtLocked(n) > now || kind == grantToken && b.capReachedLocked() {
		return 0, false
	}
	return b.admitLocked(now, now, n, kind), true
}

// arriveLocked is the arrival of a caller that found no token free for it
// at once or others waiting (takeLocked failed): it goes now if it would go
// before every caller waiting and its tokens are free; it is refused if
// its deadline comes too early (ErrDeadline) or the queue is full
// (ErrQueueFull), unless exempt; otherwise it is queued and its waiter
// returned. Requires b.mu.
func (b *Bucket) arriveLocked(now int64, n int, kind grantKind, a admission.Arrival, op string, exempt bool) (*waiter, uint64, error) {
	b.expireHoldsLocked(now)
	a.Exempt = exempt
	switch v, earliest := b.front.Decide(b.planner(), now, n, kind, a, b.queueBound()); v {
	case admission.Go:
		return nil, b.admitLocked(now, now, n, kind), nil
	case admission.Late:
		b.countCancelLocked()
		return nil, 0, refuse.Deadline(op, a.Left, time.Duration(earliest-now))
	case admission.Full:
		b.countRefusalLocked()
		return nil, 0, refuse.QueueFull(op, b.queueBound())
	}
	return b.enqueueLocked(now, n, kind, a.Who), 0, nil
}

// capReachedLocked reports whether WithConcurrency's cap (or
// WithAdaptiveConcurrency's, as it is now) leaves no place for one more
// hold. Requires b.mu.
func (b *Bucket) capReachedLocked() bool {
	if b.holds == nil {
		return false
	}
	if a := b.holds.adapt; a != nil {
		return b.holds.live >= a.Cap()
	}
	return b.hooks.concurrency > 0 && b.holds.live >= b.hooks.concurrency
}

// earliestLocked returns the earliest offset at which a caller of n tokens
// arriving at now could possibly go (SPEC.md, "Deadlines"): as if every
// caller ahead gave up and every held token were released at now.
// Requires b.mu.
func (b *Bucket) earliestLocked(now int64, n int) int64 {
	return b.win.earliest(now, b.heldLocked(), n)
}

// freeAtLocked returns the earliest offset at which n tokens are free, or
// never while that depends on held tokens. Requires b.mu.
func (b *Bucket) freeAtLocked(n int) int64 {
	if b.win.spacing > 0 && b.untimedLocked() > 0 {
		// An untimed hold departs at its completion (an operator's item at
		// its emission), which has not come: the gap after it is not known
		// until then.
		return never
	}
	return b.win.freeAt(b.heldLocked(), n)
}

// admitLocked grants n tokens as kind at now to a caller that arrived at
// arrived, and returns the hold's id for grantToken. Requires b.mu.
func (b *Bucket) admitLocked(now, arrived int64, n int, kind grantKind) (id uint64) {
	switch kind {
	case grantRecord:
		for range n {
			b.win.record(now)
		}
	case grantHold:
		b.holdLogLocked().untimed += n
	case grantToken:
		id = b.holdLogLocked().add(now, addSat(now, int64(b.hooks.holdTimeout)), n)
	}
	b.win.depart(now)
	b.countAdmitLocked(now, arrived, n)
	return id
}

// countAdmitLocked counts an admission of n tokens at now of a caller that
// arrived at arrived, and queues the OnAdmit hook. Requires b.mu.
func (b *Bucket) countAdmitLocked(now, arrived int64, n int) {
	wait := time.Duration(now - arrived)
	b.tally.admit(wait)
	if f := b.hooks.onAdmit; f != nil { // the Event's time costs a conversion: only for a hook (BENCHMARKS.md)
		b.queueHookLocked(f, Event{Key: b.tally.eventKey(), Arrived: b.timeAt(arrived), Wait: wait, N: n})
	}
}

// uncountLocked turns an admission into a cancellation, for tokens given
// back unused. Requires b.mu.
func (b *Bucket) uncountLocked() { b.tally.unadmit() }
