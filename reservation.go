package rxthrottle

import (
	"time"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// Reservation is a place in a Bucket's queue, taken by Reserve: the token is
// granted to it, in FIFO order with every other caller, at the earliest
// instant the limits allow, and it goes at that instant whether or not its
// holder is watching Ready. Cancel withdraws it before then.
//
// A nil or zero Reservation, one from a Bucket not made by NewBucket, or
// one its queue bound refused (WithMaxQueue), is not OK: it will never be granted, its Ready channel is closed (so nobody
// waiting on it hangs), Time is the zero Time and Cancel does nothing.
type Reservation struct {
	b *Bucket
	w *waiter
}

// Reserve queues for a token without blocking and returns the place taken.
// Use it to learn when a caller may go (Time, Delay) and to decide later:
// wait on Ready, or Cancel. Unlike x/time/rate's reservations, the time is
// not fixed at once: it moves earlier when a reservation ahead is cancelled
// and later on Pause or SetLimit, always following SPEC.md's schedule.
//
// Reserve takes no context, so a reservation has the default priority, 0
// (WithPriority), and no deadline: it goes after the callers of a higher
// priority already waiting, before those of a lower one, and a caller of
// higher priority arriving while it waits goes before it (its Time then
// moves later). Wait with WithPriority is the way to reserve with another.
func (b *Bucket) Reserve() *Reservation {
	if b.usable() != nil {
		return &Reservation{}
	}
	b.mu.Lock()
	defer b.unlock()
	now := b.now()
	if _, ok := b.takeLocked(now, 1, grantRecord); ok {
		w := &waiter{Ready: closedChan, Arrived: now, GrantedAt: now, N: 1, State: granted}
		return &Reservation{b: b, w: w}
	}
	if room := b.hooks.queueRoom; room > 0 && b.waitingLocked() >= room-1 {
		b.countRefusalLocked()
		return &Reservation{} // not OK: the queue bound refused it
	}
	return &Reservation{b: b, w: b.enqueueLocked(now, 1, grantRecord, fairq.Caller{})}
}

// closedChan is the Ready channel of a reservation granted at once, or of
// one that is not OK.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// OK reports whether the reservation can be honoured: it was made by
// Reserve on a usable Bucket. As with x/time/rate, check it first; unlike
// x/time/rate, an OK reservation is not yet necessarily granted (Granted).
func (r *Reservation) OK() bool { return r != nil && r.b != nil && r.w != nil }

// Ready returns a channel that is closed when the token is granted (at
// once for a reservation that is not OK).
func (r *Reservation) Ready() <-chan struct{} {
	if !r.OK() {
		return closedChan
	}
	return r.w.Ready
}

// Granted reports whether the token has been granted: the reservation's
// holder has gone.
func (r *Reservation) Granted() bool {
	if !r.OK() {
		return false
	}
	r.b.mu.Lock()
	defer r.b.unlock()
	return r.w.State == granted
}

// Time returns when the token is (or was) granted as the queue stands now:
// for a waiting reservation, the instant it will go if no one ahead cancels
// and the limits and pauses do not change, counting Tokens out as held
// until their hold timeout (so it is then an upper bound). A cancelled
// reservation, or one that is not OK, returns the zero Time.
func (r *Reservation) Time() time.Time {
	if !r.OK() {
		return time.Time{}
	}
	r.b.mu.Lock()
	defer r.b.unlock()
	if r.w.State == cancelled || r.w.State == failed {
		return time.Time{}
	}
	return r.b.timeAt(r.timeLocked(r.b.now()))
}

// timeLocked returns the grant time as an offset; requires r.b.mu and a
// reservation that is waiting or granted.
func (r *Reservation) timeLocked(now int64) int64 {
	if r.w.State == granted {
		return r.w.GrantedAt
	}
	return r.b.projectLocked(now, r.w)
}

// Delay returns how long from now until the token is granted: 0 once it
// has been, or if the reservation is not OK.
func (r *Reservation) Delay() time.Duration {
	if !r.OK() {
		return 0
	}
	r.b.mu.Lock()
	defer r.b.unlock()
	if r.w.State != waiting {
		return 0
	}
	now := r.b.now()
	return max(0, time.Duration(r.timeLocked(now)-now))
}

// Cancel withdraws a reservation that is still waiting and reports whether
// it did: the reservation then consumes no token and everyone behind moves
// up. A granted reservation has gone already; Cancel returns false.
func (r *Reservation) Cancel() bool {
	if !r.OK() {
		return false
	}
	r.b.mu.Lock()
	defer r.b.unlock()
	if r.w.State != waiting {
		return false
	}
	r.b.cancelLocked(r.w)
	return true
}

// projectLocked returns the offset at which the waiting w will be granted
// if nothing changes: on a copy of the window, the untimed holds (the
// operators' items in flight) complete now, Tokens out at their hold timeout, and every caller
// ahead of w goes at the earliest instant the limits allow. Requires b.mu.
func (b *Bucket) projectLocked(now int64, w *waiter) int64 {
	sim := b.win.clone()
	for range b.untimedLocked() {
		sim.record(now)
	}
	if b.holds != nil {
		for _, h := range b.holds.items[b.holds.head:] {
			if h.live {
				for range h.n {
					sim.recordAt(h.deadline)
				}
			}
		}
	}
	var d int64
	for _, x := range append(b.front.Ahead(w), w) { // w waits
		d = max(now, sim.freeAt(0, x.N))
		sim.depart(d)
		done := d
		if x.Kind == grantToken {
			done = addSat(d, int64(b.hooks.holdTimeout))
		}
		for range x.N {
			sim.recordAt(done)
		}
	}
	return d
}
