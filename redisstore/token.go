package redisstore

import (
	"sync"
	"sync/atomic"
)

// heldToken is the rxthrottle.TokenReleaser of one admission of Acquire:
// its tokens are held in Redis (the held ZSET) until Release or Cancel,
// or until their lease deadline. The first of Release and Cancel decides;
// the others do nothing.
type heldToken struct {
	s     *schedule
	keys  []string
	id    int64
	n     int
	d     int64 // departure, µs on Redis's clock
	ended atomic.Bool
}

// ReleaseToken records the completion at Redis's now, in the script: the
// tokens renew W after it, unless the lease deadline came first.
func (h *heldToken) ReleaseToken(uint64) {
	if h.ended.CompareAndSwap(false, true) {
		h.s.end(h.keys, h.id, h.n, h.d, "release")
	}
}

// CancelToken gives the tokens back unused, unless the lease deadline came
// first.
func (h *heldToken) CancelToken(uint64) {
	if h.ended.CompareAndSwap(false, true) {
		h.s.end(h.keys, h.id, h.n, h.d, "cancel")
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
