package redisstore

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrCircuitOpen is wrapped by the error of a call that the limiter did not
// send to Redis because Redis failed recently (see WithRetryBackoff). With
// FailClosed, Wait and Allow then return a *StoreError wrapping both
// ErrStoreUnavailable and ErrCircuitOpen at once, without a round trip.
var ErrCircuitOpen = errors.New("not called: Redis failed recently, it is retried after a back-off")

// Default back-off of the circuit breaker (WithRetryBackoff).
const (
	DefaultRetryFirst = 100 * time.Millisecond
	DefaultRetryMax   = 2 * time.Second
)

// breaker is the circuit breaker in front of Redis. Closed (the normal
// state), every call goes to Redis. The first failure opens it: for a
// back-off period no call goes to Redis and the failure policy answers at
// once. Once the period is over, one caller at a time (the probe) goes to
// Redis: a success closes the breaker, a failure opens it again for twice
// the period, up to max. Any success closes it. A call that ends without
// Redis's verdict (its caller gave up, or the limits in force refused its
// cost before any answer) is neither: the next caller probes.
//
// The closed state costs one atomic load per call; the rest is under mu.
type breaker struct {
	clock      clock.Clock
	first, max time.Duration

	open atomic.Bool // fast path: false while closed

	mu      sync.Mutex
	until   time.Time     // end of the back-off (requires mu)
	backoff time.Duration // length of the current back-off (requires mu)
	probing bool          // a probe is in flight (requires mu)
	last    error         // the failure that opened the breaker (requires mu)
}

// ticket says how one call goes: to Redis (call), and whether it is the
// probe of an open breaker.
type ticket struct {
	call, probe bool
}

// begin decides whether a call goes to Redis now.
func (b *breaker) begin() ticket {
	if !b.open.Load() {
		return ticket{call: true}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open.Load() {
		return ticket{call: true}
	}
	if b.probing || b.clock.Now().Before(b.until) {
		return ticket{}
	}
	b.probing = true
	return ticket{call: true, probe: true}
}

// succeeded closes the breaker: Redis answered.
func (b *breaker) succeeded(t ticket) {
	if !t.probe && !b.open.Load() {
		return
	}
	b.mu.Lock()
	b.open.Store(false)
	b.probing = false
	b.backoff = 0
	b.last = nil
	b.mu.Unlock()
}

// failed opens the breaker after a call to Redis failed: for the first
// back-off if it was closed, for twice the last one (up to max) if the
// probe failed. A call that was already in flight when the breaker opened
// changes nothing.
func (b *breaker) failed(t ticket, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case t.probe:
		b.probing = false
		b.backoff = min(2*b.backoff, b.max)
	case b.open.Load():
		return
	default:
		b.backoff = b.first
	}
	b.last = err
	b.until = b.clock.Now().Add(b.backoff)
	b.open.Store(true)
}

// abandoned ends a probe that did not reach a verdict (its caller's context
// ended, or its cost failed under the limits in force: ownFailed): the
// next caller probes instead.
func (b *breaker) abandoned(t ticket) {
	if !t.probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// openError is the error of a call the breaker did not send: it wraps
// ErrCircuitOpen and the failure that opened the breaker.
func (b *breaker) openError() error {
	b.mu.Lock()
	last := b.last
	b.mu.Unlock()
	if last == nil {
		return ErrCircuitOpen
	}
	return &openError{last}
}

// openError wraps ErrCircuitOpen and the failure that opened the breaker.
type openError struct{ last error }

func (e *openError) Error() string {
	return ErrCircuitOpen.Error() + " (last failure: " + e.last.Error() + ")"
}

func (e *openError) Unwrap() []error { return []error{ErrCircuitOpen, e.last} }
