package admission

import "github.com/rxthrottle/rxthrottle/internal/fairq"

// What a store's planner uses besides Dispatch (redisstore's): the
// front's order shown whole, the tokens its waiters ask for, and waiters
// that leave out of turn (served as the store let them go at once,
// failed where they stand) or give their grant back.

// Cost returns the tokens the callers waiting ask for, together: what a
// store's planner asks the store for at least (redisstore's lease pool).
func (f *Front) Cost() int {
	if f.w == nil {
		return 0
	}
	return f.w.queue.cost
}

// Requeue makes w, which was granted, wait again, first of its priority
// (Queue.Requeue), with a new Ready: the planner took its grant back (a
// store's planner whose head of the queue gives way to a waiter of a
// higher priority, Next, before its round trip). The limiter then calls
// Dispatch.
func (f *Front) Requeue(w *Waiter) {
	if f.w == nil {
		f.w = new(waits)
	}
	w.State, w.Ready = Waiting, make(chan struct{})
	f.w.queue.Requeue(w)
}

// Fail ends the wait of w, which waits, with err, wherever it stands, and
// tells its caller: a store's planner that learns from the store that w
// cannot go by its deadline (redisstore's lease pool, from a probe that
// reserves nothing) fails it at once, where Dispatch fails only a head
// (Unservable). It consumes nothing: the limiter's next Dispatch plans the
// callers behind it as if it had never arrived. It counts w leaving
// failed (p.Left).
func (f *Front) Fail(p Planner, w *Waiter, err error) {
	f.w.queue.Remove(w)
	w.State, w.Err = Failed, err
	p.Left(w, f.w.queue.live == 0)
	w.tell()
}

// Serve takes w, which waits, out of the queue as served, wherever it
// stands (Queue.Serve), and counts it leaving granted (p.Left): a store's
// planner whose store let w go at once as its ask arrived there
// (redisstore's group commit: the script admitted it at once, before the
// callers ahead of it here reached the store) serves it so, rather than
// through Dispatch, which grants the departures the store gave in the
// front's order.
func (f *Front) Serve(p Planner, w *Waiter) {
	f.w.queue.Serve(w)
	p.Left(w, f.w.queue.live == 0)
}

// All returns the waiters in the order they go if nobody else arrives or
// leaves (Queue.All).
func (f *Front) All() []*Waiter {
	if f.w == nil {
		return nil
	}
	return f.w.queue.All()
}

// FIFO reports whether the waiters go in arrival order, so that a caller
// arriving now goes after all of them (Queue.FIFO); true if none waits.
func (f *Front) FIFO() bool { return f.w == nil || f.w.queue.FIFO() }

// Seq returns w's arrival number at its front (a later arrival has a
// larger one; fairq.Item.Seq), which FIFOFrom starts from: a store's
// planner that keeps a cursor in the front's order keeps this number
// (redisstore's group commit: the first waiter whose ask waits for the
// next batch).
func (w *Waiter) Seq() uint64 { return w.item.Seq() }

// FIFOFrom calls yield with the waiters whose arrival number (Seq) is at
// least seq, in the order they go, until yield returns false; the front
// must be FIFO (one priority, one tenant, none requeued). Unlike All, it
// allocates nothing and walks nothing before them.
func (f *Front) FIFOFrom(seq uint64, yield func(*Waiter) bool) {
	if f.w == nil {
		return
	}
	f.w.queue.q.FIFOFrom(seq, func(it *fairq.Item[*Waiter]) bool { return yield(it.Value) })
}
