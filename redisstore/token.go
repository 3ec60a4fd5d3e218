package redisstore

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

var _ limiterkit.TokenReleaserN = (*heldToken)(nil)

// heldToken is the limiterkit.TokenReleaserN of one admission of Acquire:
// its tokens are held in Redis (the held ZSET) until Release or Cancel,
// or until their lease deadline. The first of Release and Cancel decides;
// the others do nothing.
type heldToken struct {
	s     *schedule
	keys  []string
	tier  string // the limits it was admitted under (request.tier)
	id    int64
	n     int
	d     int64  // departure, µs on Redis's clock
	place *place // its place under WithAdaptiveConcurrency's cap, or nil
	ended atomic.Bool
}

// ReleaseToken records the completion at Redis's now, in the script: the
// tokens renew W after it, unless the lease deadline came first.
func (h *heldToken) ReleaseToken(uint64) {
	if h.ended.CompareAndSwap(false, true) {
		h.place.end(true)
		h.s.end(h.keys, h.tier, h.id, h.n, h.d, "release")
	}
}

// ReleaseTokenN records the completion at Redis's now of work that used
// used tokens (Token.ReleaseN, SPEC.md, "Cost known after the call"): up
// to n renew W after it, the others come back at once, and beyond n the
// extra count as departures at the release (a debt). A hold that has
// ended (Release, Cancel, an earlier ReleaseN, its lease deadline) records
// nothing: the error wraps rxthrottle.ErrTokenEnded. A failed call
// returns its *StoreError (the hold then ends at its lease deadline).
func (h *heldToken) ReleaseTokenN(_ uint64, used int) error {
	if used < 0 {
		return fmt.Errorf("redisstore: Token.ReleaseN(%d): used must not be negative", used)
	}
	if !h.ended.CompareAndSwap(false, true) {
		return fmt.Errorf("redisstore: Token.ReleaseN(%d): %w: released or cancelled before", used, rxthrottle.ErrTokenEnded)
	}
	h.place.end(used > 0)
	how := "cancel"
	if used > 0 {
		how = "use:" + strconv.Itoa(used)
	}
	k, err := h.s.end(h.keys, h.tier, h.id, h.n, h.d, how)
	switch {
	case err != nil:
		return err
	case k == 0:
		return fmt.Errorf("redisstore: Token.ReleaseN(%d): %w: its lease deadline passed", used, rxthrottle.ErrTokenEnded)
	}
	return nil
}

// CancelToken gives the tokens back unused, unless the lease deadline came
// first.
func (h *heldToken) CancelToken(uint64) {
	if h.ended.CompareAndSwap(false, true) {
		h.place.end(false)
		h.s.end(h.keys, h.tier, h.id, h.n, h.d, "cancel")
	}
}

// wakeup lets the callers blocked by held tokens sleep until this process
// ends a hold: channel returns a channel that the next notify closes.
type wakeup struct {
	mu sync.Mutex
	ch chan struct{}
}

func (w *wakeup) channel() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

func (w *wakeup) notify() {
	w.mu.Lock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
	w.mu.Unlock()
}
