package rxthrottle

import "time"

// Reservation is a place in a Bucket's queue, taken by Reserve: the token is
// granted to it, in FIFO order with every other caller, at the earliest
// instant the limits allow, and it goes at that instant whether or not its
// holder is watching Ready. Cancel withdraws it before then.
type Reservation struct {
	b *Bucket
	w *waiter
}

// Reserve queues for a token without blocking and returns the place taken.
// Use it to learn when a caller may go (Time, Delay) and to decide later:
// wait on Ready, or Cancel. Unlike x/time/rate's reservations, the time is
// not fixed at once: it moves earlier when a reservation ahead is cancelled
// and later on Pause or SetLimit, always following SPEC.md's schedule.
func (b *Bucket) Reserve() *Reservation {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.takeLocked(now, false) {
		w := &waiter{ready: closedChan, arrived: now, grantedAt: now, state: granted}
		return &Reservation{b: b, w: w}
	}
	return &Reservation{b: b, w: b.enqueueLocked(now, false)}
}

// closedChan is the Ready channel of a reservation granted at once.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Ready returns a channel that is closed when the token is granted.
func (r *Reservation) Ready() <-chan struct{} { return r.w.ready }

// OK reports whether the token has been granted.
func (r *Reservation) OK() bool {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	return r.w.state == granted
}

// Time returns when the token is (or was) granted as the queue stands now:
// for a waiting reservation, the instant it will go if no one ahead cancels
// and the limits and pauses do not change. A cancelled reservation returns
// the zero Time.
func (r *Reservation) Time() time.Time {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if r.w.state == cancelled {
		return time.Time{}
	}
	return r.b.win.time(r.timeLocked(r.b.now()))
}

// timeLocked returns the grant time as an offset; requires r.b.mu and a
// reservation that is not cancelled.
func (r *Reservation) timeLocked(now int64) int64 {
	b := r.b
	if r.w.state == granted {
		return r.w.grantedAt
	}
	return b.win.project(now, b.held, b.queue.position(r.w))
}

// Delay returns how long from now until the token is granted: 0 once it
// has been.
func (r *Reservation) Delay() time.Duration {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if r.w.state != waiting {
		return 0
	}
	now := r.b.now()
	return max(0, time.Duration(r.timeLocked(now)-now))
}

// Cancel withdraws a reservation that is still waiting and reports whether
// it did: the reservation then consumes no token and everyone behind moves
// up. A granted reservation has gone already; Cancel returns false.
func (r *Reservation) Cancel() bool {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if r.w.state != waiting {
		return false
	}
	r.b.cancelLocked(r.w)
	return true
}
