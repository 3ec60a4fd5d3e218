package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/adaptive"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// gates are rxthrottle.WithAdaptiveConcurrency's cap, a concern of this
// process's front, not of Redis: per schedule (a Bucket, or one key of a
// Keyed limiter), at most the cap of this process's holds are open at
// once, and the cap moves from the latencies of the holds that complete
// (internal/adaptive), as the in-memory limiters' does. A caller enters
// its schedule's gate before its round trip: an internal/admission front
// whose planner says a hold may go while fewer than the cap's holds are
// open, so a caller over the cap waits in its place (priority, tenant,
// arrival), a Wait waits its turn behind a capped caller, and nobody is
// refused for the cap. A hold's place is taken from its entry until its
// end (Release, Cancel, ReleaseN, or the hold timeout from its
// departure, on the local clock); its latency, from its departure to its
// Release, is the sample.
type gates struct {
	min, max    int
	clock       clock.Clock
	holdTimeout time.Duration
	mu          sync.Mutex
	m           map[string]*gate // by the schedule's first key
}

// maxIdleGates is the number of gates kept before the idle ones are
// dropped (a Keyed limiter's keys), forgetting what they learned.
const maxIdleGates = 4096

// The kinds of a gate's waiters.
const (
	gateWait uint8 = iota // a Wait: holds no place
	gateHold              // an Acquire: takes a place
)

// gate is one schedule's cap; its methods but enter and end require
// gates.mu.
type gate struct {
	gs      *gates
	front   front.Front
	adapt   *adaptive.Limiter
	open    []*place // the places taken
	granted map[*front.Waiter]*place
}

// place is one hold's place under the cap.
type place struct {
	gt       *gate
	departed bool
	start    int64 // its departure, ns on the local clock
	deadline int64 // its hold timeout's end, once departed
	open     int   // places taken at its departure, its own included
}

// newGates returns the gates of WithAdaptiveConcurrency(min, max), or nil
// without it (max 0).
func newGates(min, max int, c clock.Clock, holdTimeout time.Duration) *gates {
	if max == 0 {
		return nil
	}
	return &gates{min: min, max: max, clock: c, holdTimeout: holdTimeout, m: map[string]*gate{}}
}

func (gs *gates) now() int64 { return gs.clock.Now().UnixNano() }

// getLocked returns key's gate, made if it is not there.
func (gs *gates) getLocked(key string) *gate {
	if gt := gs.m[key]; gt != nil {
		return gt
	}
	if len(gs.m) >= maxIdleGates {
		for k, gt := range gs.m {
			if len(gt.open) == 0 && gt.front.Waiting() == 0 {
				delete(gs.m, k)
			}
		}
	}
	gt := &gate{gs: gs, adapt: adaptive.New(adaptive.Config{Min: gs.min, Max: gs.max}), granted: map[*front.Waiter]*place{}}
	gs.m[key] = gt
	return gt
}

// waiting reports whether callers of key wait at its gate.
func (gs *gates) waiting(key string) bool {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gt := gs.m[key]
	return gt != nil && gt.front.Waiting() > 0
}

// capOf returns key's cap now.
func (gs *gates) capOf(key string) int {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gt := gs.m[key]; gt != nil {
		return gt.adapt.Cap()
	}
	return gs.min
}

// enter lets the caller who (a hold if hold) through key's gate: at once
// if it leads and, for a hold, a place is free, else once its turn comes.
// admit, called (with no lock held) before the caller would wait, may
// refuse it (the queue bound) and tells OnWait. It returns the hold's
// place (nil for a Wait), or ctx's error, having taken nothing.
func (gs *gates) enter(ctx context.Context, key string, who fairq.Caller, hold bool, admit func() error) (*place, error) {
	kind := gateWait
	if hold {
		kind = gateHold
	}
	gs.mu.Lock()
	gt := gs.getLocked(key)
	now := gs.now()
	gt.expireLocked(now)
	if v, _ := gt.front.Decide(gt, now, who.Cost, kind, front.Arrival{Who: who}, -1); v == front.Go {
		sl := gt.takeLocked(kind)
		gs.mu.Unlock()
		return sl, nil
	}
	gs.mu.Unlock()
	if err := admit(); err != nil {
		return nil, err
	}
	gs.mu.Lock()
	w := front.NewWaiter(gs.now(), who.Cost, kind, who)
	gt.front.Push(w)
	gt.front.Dispatch(gt, gs.now())
	gs.mu.Unlock()
	select {
	case <-w.Ready:
	case <-ctx.Done():
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if w.State == front.Waiting {
		gt.front.Cancel(gt, w)
		gt.front.Dispatch(gt, gs.now())
		return nil, ctx.Err()
	}
	sl := gt.granted[w]
	delete(gt.granted, w)
	return sl, nil
}

// takeLocked takes a place for a hold (kind gateHold).
func (gt *gate) takeLocked(kind uint8) *place {
	if kind != gateHold {
		return nil
	}
	sl := &place{gt: gt}
	gt.open = append(gt.open, sl)
	return sl
}

// depart starts sl's hold: its latency and its hold timeout run from now.
func (sl *place) depart() {
	if sl == nil {
		return
	}
	gs := sl.gt.gs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	sl.departed, sl.start, sl.open = true, gs.now(), len(sl.gt.open)
	sl.deadline = sl.start + int64(gs.holdTimeout)
	sl.gt.front.Dispatch(sl.gt, sl.start) // arms the timer for its timeout if callers wait
}

// end frees sl's place (sl may be nil); completed says its call completed
// (its latency is a sample for the cap). An ended place is left alone.
func (sl *place) end(completed bool) {
	if sl == nil {
		return
	}
	gs := sl.gt.gs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	now := gs.now()
	sl.gt.endLocked(sl, now, completed)
	sl.gt.front.Dispatch(sl.gt, now)
}

// endLocked frees sl's place, if it is taken.
func (gt *gate) endLocked(sl *place, now int64, completed bool) {
	for i, o := range gt.open {
		if o == sl {
			gt.open = append(gt.open[:i], gt.open[i+1:]...)
			if completed && sl.departed {
				gt.adapt.Sample(sl.start, now, sl.open)
			}
			return
		}
	}
}

// FreeAt says a hold may go while a place is free, a Wait at once.
func (gt *gate) FreeAt(_ int, kind uint8) int64 {
	if kind == gateHold && len(gt.open) >= gt.adapt.Cap() {
		return front.Never
	}
	return front.Unknown // free at any instant
}

// NextChange returns the earliest hold timeout of the places taken.
func (gt *gate) NextChange() int64 {
	at := front.Never
	for _, sl := range gt.open {
		if sl.departed {
			at = min(at, sl.deadline)
		}
	}
	return at
}

// Grant takes w's place, for the caller to find in granted.
func (gt *gate) Grant(w *front.Waiter, _ int64) {
	if sl := gt.takeLocked(w.Kind); sl != nil {
		gt.granted[w] = sl
	}
}

// Unservable is nil: the cap serves every caller in turn.
func (gt *gate) Unservable(*front.Waiter) error { return nil }

// Earliest is Unknown: deadlines are Redis's to judge.
func (gt *gate) Earliest(int64, int) int64 { return front.Unknown }

// Left counts nothing: the schedule's counters count the callers.
func (gt *gate) Left(*front.Waiter, bool) {}

// Clock is the local clock.
func (gt *gate) Clock() clock.Clock { return gt.gs.clock }

// Wake ends the holds timed out (completed, as for the in-memory
// limiters) and lets the next callers through.
func (gt *gate) Wake() {
	gs := gt.gs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	now := gs.now()
	gt.front.Timer().Expired(now)
	gt.expireLocked(now)
	gt.front.Dispatch(gt, now)
}

// expireLocked ends the holds whose hold timeout is due at now.
func (gt *gate) expireLocked(now int64) {
	for i := 0; i < len(gt.open); {
		if sl := gt.open[i]; sl.departed && sl.deadline <= now {
			gt.endLocked(sl, now, true)
			continue
		}
		i++
	}
}
