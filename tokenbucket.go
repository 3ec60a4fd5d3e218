package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/admission"
)

// Bucket is a lossless token bucket over a sliding window: a Limit of N
// tokens per window W (or several limits at once). Each caller waits for a
// token, takes it, goes, and the token is renewed exactly W after that
// moment (Wait), or W after the work it paid for is done (Acquire and
// Token.Release). So at most N callers go in any window of length W, a
// burst of up to N goes at once, callers go in arrival order (FIFO), and
// nobody waits longer than the quota requires. SPEC.md gives the exact
// schedule.
//
// Use Wait to block until a token is yours, Acquire to hold it for the
// work it pays for (Token.ReleaseN when its cost is known only after it), Allow to take one only if it is free now, and Reserve
// to queue and decide later; the ...N forms take n tokens at once (an API
// that charges points per call). Pause defers everyone (for a 429's
// Retry-After); SetLimit changes the limits of a live bucket. Optional
// rules shape calls the way APIs meter them: WithConcurrency caps the calls
// in flight (WithAdaptiveConcurrency with a cap learned from their
// latency), WithPriority lets urgent callers go first, WithTenant shares
// the quota fairly among the users of a service, WithMaxQueue
// refuses callers beyond a queue bound, and a caller whose context's
// deadline comes before it could possibly go is refused at once
// (ErrDeadline).
//
// Build a Bucket with NewBucket. A nil or zero Bucket is not usable: its
// methods return an error saying so (Pause does nothing, Stats returns
// zeros) rather than panic. A Bucket is safe for concurrent use. However
// many callers wait, it keeps one timer.
type Bucket struct {
	// The fields are in the order of keyEntry's cache lines (see keyEntry
	// and TestKeyEntryEdgeLinesAreReadOnly): what a call only reads first,
	// then what every call writes, then the rest of what it reads.

	// Read by a call, never written: the first line of a key's entry.
	//
	// clock is hooks.clock, kept here because every call reads it; nil for
	// the real clock (clock.New()), which Bucket.now reads with time.Since.
	clock clock.Clock
	hooks *hooks      // the settings, shared by the keys of one shard of a Keyed limiter
	key   string      // for hook events; "" outside Keyed
	calls *[]hookCall // hook calls to make once mu is released; nil until a hook is called
	stats *counters   // nil for a Keyed's keys, whose counts go to hooks.agg

	// Written by every call: the middle lines.
	mu sync.Mutex
	// keyCalls counts the calls made on a Keyed's key (it paces the ring's
	// padding, the stripe's refresh and sweeps), keyDead says the key was
	// forgotten (no longer in its table), keyRingPadded that its ring
	// was given guard lines (padRingLocked) and keyTiered that it has
	// limits of its own (WithKeyLimits), which Keyed.SetLimit leaves alone.
	// Guarded by mu; unused outside Keyed.
	keyCalls      uint32
	keyDead       bool
	keyRingPadded bool
	keyTiered     bool
	// stripe is where a Keyed's key counts its admissions: the stripe of
	// the processor that last refreshed it (see Keyed.with), so that the
	// hot path skips the lookup stripes.local makes. nil outside Keyed, and
	// until the key's first call ends.
	stripe *stripe
	win    window // its written fields first

	// Read by a call, written only by some: the last line.
	front admission.Front // the callers queued and their timer
	holds *holdLog        // the holds out (Tokens, operator items); nil until the first
}

// A Keyed limiter keeps a Bucket per key, so every field counts: the
// settings every key shares live behind hooks, what only some buckets use
// (hook calls, Tokens, a queue and its timer) is allocated on first use, and
// a key's counts go to its shard's aggregate rather than to counters of its
// own. A Bucket must fit in keyEntry's two pairs of cache lines (see
// keyEntry); TestKeyEntrySize says when it no longer does.

// counters feed Stats.
type counters struct {
	admitted, waited, cancelled, refused uint64
	totalWait, maxWait                   time.Duration
}

var _ Limiter = (*Bucket)(nil)

// errNotBuilt is returned by the methods of a nil or zero Bucket.
var errNotBuilt = errors.New("rxthrottle: Bucket is nil or was not made by NewBucket")

var errNilContext = errors.New("rxthrottle: nil context")

// NewBucket returns a Bucket enforcing limit, and every limit added with
// WithLimit at the same time. It reads the options WithClock, WithLimit,
// WithHoldTimeout, WithSpacing, WithConcurrency, WithAdaptiveConcurrency,
// WithMaxQueue, OnWait and OnAdmit. It returns an error wrapping ErrInvalidLimit for a limit with
// N < 1 or Window <= 0, and an error for a bad option or one it does not
// read (WithMaxKeys, WithIdleMargin, WithKeyLimits).
func NewBucket(limit Limit, opts ...Option) (*Bucket, error) {
	cfg, err := buildConfig(limit, opts)
	if err != nil {
		return nil, err
	}
	if cfg.keyedOnly != "" {
		return nil, fmt.Errorf("rxthrottle: %s is an option of NewKeyed and ThrottleBy: NewBucket, Throttle and ThrottleMap do not read it", cfg.keyedOnly)
	}
	b := new(Bucket)
	// The base carries the real clock's monotonic reading, so clock.Since
	// measures offsets on the monotonic clock, with one clock read.
	b.init(cfg.clock.Now(), cfg.limits, cfg.meteredHooks(nil), "")
	return b, nil
}

// init sets up a bucket on valid limits, measuring time from base.
// h.clock is the clock it reads.
func (b *Bucket) init(base time.Time, limits []Limit, h *hooks, key string) {
	b.clock, b.hooks, b.key = h.clock, h, key
	if isRealClock(h.clock) {
		b.clock = nil
	}
	if h.agg == nil {
		b.stats = new(counters)
	}
	b.win = newWindow(base, limits)
	b.win.spacing = int64(h.spacing)
}

// usable returns errNotBuilt for a nil or zero Bucket.
func (b *Bucket) usable() error {
	if b == nil || b.hooks == nil {
		return errNotBuilt
	}
	return nil
}

// validLimits checks every limit and returns them as one slice.
func validLimits(first Limit, more ...Limit) ([]Limit, error) {
	limits := append([]Limit{first}, more...)
	for i, l := range limits {
		if i == 0 {
			if err := l.Validate(); err != nil {
				return nil, err
			}
		} else if reason := l.invalid(); reason != "" {
			return nil, fmt.Errorf("rxthrottle: limit #%d (%v): %s: %w", i+1, l, reason, ErrInvalidLimit)
		}
	}
	return limits, nil
}

// WaitN is Wait for a caller that costs n tokens: it waits, in FIFO order,
// until n tokens are free at once and takes them all. n < 1 or n above the
// smallest N of the limits is an error wrapping ErrInvalidCost, at once.
func (b *Bucket) WaitN(ctx context.Context, n int) error {
	_, err := b.waitN(ctx, n, grantRecord, "WaitN", false)
	return err
}

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
	if err := ctx.Err(); err != nil {
		return 0, err
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
		return nil, 0, deadlineError(op, a.Left, time.Duration(earliest-now))
	case admission.Full:
		b.countRefusalLocked()
		return nil, 0, queueFullError(op, b.queueBound())
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
	if b.win.spacing > 0 && b.opHeldLocked() > 0 {
		// The operator's items in flight have not departed yet as far as
		// the bucket knows: the gap after them is not known until flush.
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
		b.holdLogLocked().op += n
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
	if s := b.stats; s != nil {
		s.admitted++
		if wait > 0 {
			s.waited++
			s.totalWait += wait
			s.maxWait = max(s.maxWait, wait)
		}
	}
	if b.stripe != nil {
		b.stripe.admit(wait)
	} else if b.hooks.agg != nil {
		b.hooks.agg.admit(wait)
	}
	if f := b.hooks.onAdmit; f != nil { // the Event's time costs 3-4 ns of a 60 ns Wait
		b.queueHookLocked(f, Event{Key: b.key, Arrived: b.win.time(arrived), Wait: wait, N: n})
	}
}

// uncountLocked turns an admission into a cancellation, for tokens given
// back unused. Requires b.mu.
func (b *Bucket) uncountLocked() {
	if b.stats != nil {
		b.stats.admitted--
		b.stats.cancelled++
	}
	if b.hooks.agg != nil {
		b.hooks.agg.admitted.Add(^uint64(0))
		b.hooks.agg.cancelled.Add(1)
	}
}

// idleLocked reports whether the bucket is indistinguishable from a new one
// at now, so a Keyed limiter may forget it. Requires b.mu.
func (b *Bucket) idleLocked(now int64) bool {
	b.expireHoldsLocked(now)
	return b.waitingLocked() == 0 && b.heldLocked() == 0 && b.win.idleAt() <= now
}
