package attempt

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// Holds keeps the tokens of attempts that failed after their request may
// have been written, until the request can no longer arrive, and counts
// them. The zero Holds is ready to use; it is safe for concurrent use.
type Holds struct {
	afterWrite, held, early atomic.Uint64
	holding                 atomic.Int64
}

// HoldStats counts what a Holds did.
type HoldStats struct {
	// AfterWrite is the number of attempts that failed after their
	// request may have been written.
	AfterWrite uint64
	// Held is the number of those whose token was held past the error;
	// it is less than AfterWrite when the bound is 0 or nothing was held
	// (a token that renews at departure).
	Held uint64
	// Early is the number of holds ended before the bound (Hold.End): the
	// attempt's late answer came, or its connection was closed by the
	// peer.
	Early uint64
	// Holding is the number of tokens held past their error right now.
	Holding int64
}

// Stats returns a snapshot of h's counters.
func (h *Holds) Stats() HoldStats {
	return HoldStats{
		AfterWrite: h.afterWrite.Load(),
		Held:       h.held.Load(),
		Early:      h.early.Load(),
		Holding:    h.holding.Load(),
	}
}

// PastError ends the token of an attempt that failed after its request may
// have been written: release (the token's Release) is called once bound
// has passed on c, or at once with a bound of 0. A nil release (a token
// that renews at departure, with nothing to hold) is only counted. The
// returned Hold ends the hold sooner, when the attempt shows that its
// request can no longer arrive; it is nil when nothing is held.
func (h *Holds) PastError(c clock.Clock, bound time.Duration, release func()) *Hold {
	h.afterWrite.Add(1)
	if release == nil {
		return nil
	}
	if bound == 0 {
		release()
		return nil
	}
	h.held.Add(1)
	h.holding.Add(1)
	x := &Hold{h: h, release: release}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.timer = c.AfterFunc(bound, func() { x.end() })
	return x
}

// Hold is one token held past its attempt's error (Holds.PastError).
type Hold struct {
	h       *Holds
	release func()

	mu    sync.Mutex
	timer *clock.Timer
	done  bool
}

// End releases the token now, before the bound, if it is still held, and
// reports whether it was. Call it only when the request can no longer
// arrive. A nil Hold's End does nothing.
func (x *Hold) End() bool {
	if x == nil {
		return false
	}
	x.mu.Lock()
	timer := x.timer
	x.mu.Unlock()
	if !x.end() {
		return false
	}
	timer.Stop()
	x.h.early.Add(1)
	return true
}

// end releases the token once; it reports whether this call did.
func (x *Hold) end() bool {
	x.mu.Lock()
	if x.done {
		x.mu.Unlock()
		return false
	}
	x.done = true
	x.mu.Unlock()
	x.release()
	x.h.holding.Add(-1)
	return true
}
