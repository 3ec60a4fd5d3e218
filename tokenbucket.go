package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Bucket is a lossless token bucket over a sliding window: a Limit of N
// tokens per window W (or several limits at once). Each caller waits for a
// token, takes it, goes, and the token is renewed exactly W after that
// moment. So at most N callers go in any window of length W, a burst of up to
// N goes at once, callers go in arrival order (FIFO), and nobody waits longer
// than the quota requires. SPEC.md gives the exact schedule.
//
// Use Wait to block until a token is yours, Allow to take one only if it is
// free now, and Reserve to queue and decide later. Pause defers everyone
// (for a 429's Retry-After); SetLimit changes the limits of a live bucket.
//
// Build a Bucket with NewBucket; the zero value is not usable. A Bucket is
// safe for concurrent use. However many callers wait, it keeps one timer.
type Bucket struct {
	mu    sync.Mutex
	clock clock.Clock
	hooks *hooks // shared by the keys of one shard of a Keyed limiter
	key   string // for hook events; "" outside Keyed

	win   window
	queue waitQueue
	held  int // granted to the operator, not yet emitted downstream
	sched scheduler
	stats counters
}

// hooks are the user callbacks of OnWait and OnAdmit, and for the buckets
// of a Keyed limiter the counters they all add to.
type hooks struct {
	onWait, onAdmit func(Event)
	agg             *aggregate // nil outside Keyed
}

// counters feed Stats.
type counters struct {
	admitted, waited, cancelled uint64
	totalWait, maxWait          time.Duration
}

var _ Limiter = (*Bucket)(nil)

// NewBucket returns a Bucket enforcing limit, and every limit added with
// WithLimit at the same time. It reads the options WithClock, WithLimit,
// OnWait and OnAdmit. It returns an error wrapping ErrInvalidLimit for a
// limit with N < 1 or Window <= 0, and an error for a nil clock.
func NewBucket(limit Limit, opts ...Option) (*Bucket, error) {
	cfg, err := buildConfig(limit, opts)
	if err != nil {
		return nil, err
	}
	b := new(Bucket)
	// The base carries the real clock's monotonic reading, so clock.Since
	// measures offsets on the monotonic clock, with one clock read.
	b.init(cfg.clock, cfg.clock.Now(), cfg.limits, &hooks{onWait: cfg.onWait, onAdmit: cfg.onAdmit}, "")
	return b, nil
}

// init sets up a bucket on valid limits, measuring time from base.
func (b *Bucket) init(c clock.Clock, base time.Time, limits []Limit, h *hooks, key string) {
	b.clock, b.hooks, b.key = c, h, key
	b.win = newWindow(base, limits)
	b.sched = scheduler{clock: c, owner: b}
}

// validLimits checks every limit and returns them as one slice.
func validLimits(first Limit, more ...Limit) ([]Limit, error) {
	limits := append([]Limit{first}, more...)
	for i, l := range limits {
		if err := l.Validate(); err != nil {
			if i > 0 {
				return nil, fmt.Errorf("limit #%d: %w", i+1, err)
			}
			return nil, err
		}
	}
	return limits, nil
}

var errNilContext = errors.New("rxthrottle: nil context")

// now reads the injected clock as a window offset.
func (b *Bucket) now() int64 { return int64(b.clock.Since(b.win.base)) }

// Wait blocks until a token is the caller's, then takes it and returns nil.
// Callers are served in the order they called Wait. If ctx ends first, Wait
// returns ctx.Err() and consumes no token: the callers behind move up. If the
// token is granted at the very moment ctx ends, Wait returns nil: the caller
// went.
func (b *Bucket) Wait(ctx context.Context) error {
	return b.wait(ctx, false)
}

// wait is Wait; with hold, the token is granted but its emission is only
// recorded by flush (or dropped by giveBack), for the operator, whose item is
// emitted when the downstream receives it.
func (b *Bucket) wait(ctx context.Context, hold bool) error {
	if ctx == nil {
		return errNilContext
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	w := b.arriveLocked(b.now(), hold)
	b.mu.Unlock()
	if w == nil {
		return nil
	}
	return b.await(ctx, w)
}

// arriveLocked admits a caller arriving at now if a token is free and nobody
// waits, and returns nil; otherwise it queues the caller and returns its
// waiter. Requires b.mu.
func (b *Bucket) arriveLocked(now int64, hold bool) *waiter {
	if b.takeLocked(now, hold) {
		return nil
	}
	return b.enqueueLocked(now, hold)
}

// takeLocked admits a caller at now, or with hold holds a token for it, if
// a token is free and nobody waits; otherwise it changes nothing and
// returns false. Requires b.mu.
func (b *Bucket) takeLocked(now int64, hold bool) bool {
	if b.queue.live > 0 || b.win.freeAt(b.held) > now {
		return false
	}
	b.admitLocked(now, now, hold)
	return true
}

// await blocks until w is granted or ctx ends, and then withdraws w (or, for
// a held grant, gives its token back).
func (b *Bucket) await(ctx context.Context, w *waiter) error {
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.state == granted {
		if !w.hold {
			return nil
		}
		b.giveBackLocked()
		return ctx.Err()
	}
	b.cancelLocked(w)
	return ctx.Err()
}

// Allow takes a token and returns true if one is free now and nobody is
// waiting; otherwise it returns false at once and changes nothing. It never
// jumps the queue.
func (b *Bucket) Allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.takeLocked(b.now(), false)
}

// Pause holds every caller back until until: none goes before it, nobody is
// dropped, and the order is kept (a 429's Retry-After). A Pause never
// shortens an earlier, longer one; a time in the past does nothing.
func (b *Bucket) Pause(until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pauseLocked(until, b.now())
}

// pauseLocked raises the pause floor to until and re-plans the queue at
// now. Requires b.mu.
func (b *Bucket) pauseLocked(until time.Time, now int64) {
	b.win.pause(b.win.offset(until))
	b.dispatchLocked(now)
}

// SetLimit replaces the bucket's limits with limit and more, effective at
// once. The emission history is kept: the SPEC schedule goes on with the new
// (N, W) as if they had always been in force, so lowering N or raising W can
// make the next token later and raising N frees tokens at once. Callers
// already waiting keep their places and go by the new limits. The limits are
// validated first; on error nothing changes.
func (b *Bucket) SetLimit(limit Limit, more ...Limit) error {
	limits, err := validLimits(limit, more...)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.win.setLimits(limits)
	b.dispatchLocked(b.now())
	return nil
}

// Limits returns the limits in force, the first one first.
func (b *Bucket) Limits() []Limit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Limit(nil), b.win.limits...)
}

// Stats returns a snapshot of the bucket's counters. It does not allocate.
func (b *Bucket) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.statsLocked(b.now())
}

// statsLocked requires b.mu.
func (b *Bucket) statsLocked(now int64) Stats {
	return Stats{
		Admitted:  b.stats.admitted,
		Waited:    b.stats.waited,
		Cancelled: b.stats.cancelled,
		TotalWait: b.stats.totalWait,
		MaxWait:   b.stats.maxWait,
		Queued:    b.queue.live,
		Free:      b.win.free(now, b.held),
	}
}

// enqueueLocked queues a waiter arriving at now and plans the wake-up.
// Requires b.mu.
func (b *Bucket) enqueueLocked(now int64, hold bool) *waiter {
	w := &waiter{ready: make(chan struct{}), arrived: now, hold: hold}
	b.queue.push(w)
	if b.hooks.agg != nil {
		b.hooks.agg.queued(1, b.queue.live == 1)
	}
	if b.hooks.onWait != nil {
		b.hooks.onWait(Event{Key: b.key, Arrived: b.win.time(now)})
	}
	b.dispatchLocked(now)
	return w
}

// cancelLocked withdraws a waiting waiter: it consumes no token, and the
// callers behind it are re-planned as if it had never arrived. Requires b.mu.
func (b *Bucket) cancelLocked(w *waiter) {
	b.queue.cancel(w)
	b.stats.cancelled++
	if b.hooks.agg != nil {
		b.hooks.agg.cancelled.Add(1)
		b.hooks.agg.queued(-1, b.queue.live == 0)
	}
	b.dispatchLocked(b.now())
}

// admitLocked grants a token at now to a caller that arrived at arrived:
// it records the emission or, with hold, counts a held token. Requires b.mu.
func (b *Bucket) admitLocked(now, arrived int64, hold bool) {
	if hold {
		b.held++
	} else {
		b.win.record(now)
	}
	wait := time.Duration(now - arrived)
	b.stats.admitted++
	if wait > 0 {
		b.stats.waited++
		b.stats.totalWait += wait
		b.stats.maxWait = max(b.stats.maxWait, wait)
	}
	if b.hooks.agg != nil {
		b.hooks.agg.admit(wait)
	}
	if b.hooks.onAdmit != nil {
		b.hooks.onAdmit(Event{Key: b.key, Arrived: b.win.time(arrived), Wait: time.Duration(now - arrived)})
	}
}

// dispatchLocked grants tokens to the head of the queue for as long as one is
// free at now, then arms the one timer for the instant the next head's token
// is free (or disarms it: nobody waits, or the next token waits for a held
// one to be emitted). Requires b.mu.
func (b *Bucket) dispatchLocked(now int64) {
	for w := b.queue.peek(); w != nil; w = b.queue.peek() {
		at := b.win.freeAt(b.held)
		if at == never {
			break
		}
		if at > now {
			b.sched.wakeAt(at, time.Duration(at-now))
			return
		}
		b.queue.pop()
		if b.hooks.agg != nil {
			b.hooks.agg.queued(-1, b.queue.live == 0)
		}
		b.admitLocked(now, w.arrived, w.hold)
		w.state, w.grantedAt = granted, now
		close(w.ready)
		if w.notify != nil {
			w.notify()
		}
	}
	b.sched.disarm()
}

// wake is the timer's callback.
func (b *Bucket) wake() {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sched.expired(now)
	b.dispatchLocked(now)
}

// tryHold records n held tokens as emitted at at (n is 0 unless the caller
// stamped emissions of a bucket only it uses), then holds one more, without
// reading the clock, if one was free at known, an earlier reading of it,
// and nobody waits: free tokens never become fewer as time passes, so one
// free then is free now. It is the operator's fast path. It need not re-plan
// the queue: recording a stamp only happens on a private bucket, and taking
// a token frees none.
func (b *Bucket) tryHold(n int, at, known int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recordHeldLocked(n, at)
	return b.takeLocked(known, true)
}

// flush records held tokens as emitted: stamped of them at at, and rest at
// a fresh clock reading, which it returns. Both instants are no earlier than
// the true emissions, so the window can only be stricter, and exactly theirs
// on virtual time when nothing blocked in between.
func (b *Bucket) flush(stamped int, at int64, rest int) int64 {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recordHeldLocked(stamped, at)
	b.recordHeldLocked(rest, now)
	b.dispatchLocked(now)
	return now
}

// recordHeldLocked turns n held tokens into emissions at off. Requires b.mu.
func (b *Bucket) recordHeldLocked(n int, off int64) {
	for range n {
		b.win.record(off)
	}
	b.held -= n
}

// giveBack returns a held token whose item was never emitted.
func (b *Bucket) giveBack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.giveBackLocked()
}

// giveBackLocked requires b.mu.
func (b *Bucket) giveBackLocked() {
	b.held--
	b.stats.admitted--
	b.stats.cancelled++
	if b.hooks.agg != nil {
		b.hooks.agg.admitted.Add(^uint64(0))
		b.hooks.agg.cancelled.Add(1)
	}
	b.dispatchLocked(b.now())
}

// idleLocked reports whether the bucket is indistinguishable from a new one
// at now, so a Keyed limiter may forget it. Requires b.mu.
func (b *Bucket) idleLocked(now int64) bool {
	return b.queue.live == 0 && b.held == 0 && b.win.idleAt() <= now
}
