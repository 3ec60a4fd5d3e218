package rxthrottle

import (
	"context"
	"errors"
	"fmt"

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
	// What a call writes first: the lock, then the window it guards, whose
	// written fields come first, so that a call writes one cache line, the
	// lock's, and the core that takes the lock takes them with it. A
	// Keyed's key (keyEntry) puts its own state before a whole Bucket and
	// relies on this order; the Bucket holds nothing of Keyed's.
	mu  bucketMu // sync.Mutex, and Wait's budget (wait_fastpath.go)
	win window

	// What a call reads and seldom writes: the settings and where it counts,
	hooks *hooks                 // the settings, shared by the keys of one shard of a Keyed limiter
	tally tally                  // where it counts its callers and what its events name
	calls admission.Calls[Event] // hook calls to make once mu is released; none made until a hook is called
	// and what a call reads, written once, when the first caller waits or
	// the first hold is made.
	front admission.Front // the callers queued and their timer
	holds *holdLog        // the holds out (Tokens, operator items); nil until the first
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
	h := cfg.meteredHooks(nil)
	// The base carries the real clock's monotonic reading, so clock.Since
	// measures offsets on the monotonic clock, with one clock read.
	h.base = cfg.clock.Now()
	b.init(cfg.limits, h, new(bucketCounts))
	return b, nil
}

// init sets up a bucket on valid limits, with the settings h (whose clock
// it reads, as offsets from h.base), counting into t.
func (b *Bucket) init(limits []Limit, h *hooks, t tally) {
	b.hooks, b.tally = h, t
	b.win = newWindow(limits)
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
