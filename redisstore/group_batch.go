package redisstore

import (
	"slices"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// A batch (one script run) is taken from two places: the flight's queue
// (flight.queue), which holds the ends of admissions and Allow's
// admissions, and the window's front, whose waiters' asks (a Wait's or an
// Acquire's admission, pending.fair; the front's Waiter links to it:
// Waiter.Ask) wait for the next batch while they have no answer yet:
// pending.asking, not in flight, no departure, not answered and asking
// again. The batch is the ends first, then the asks without an answer in
// the front's order as the batch is taken (SPEC.md, "Priorities", "Fair
// shares"), each Allow's admission among them by priority, then arrival
// (placeAllows), up to maxBatch. While the front is FIFO (one priority,
// one tenant) its order is arrival order, and the window keeps a cursor
// (window.cursor: no ask waits that arrived before it), so a batch walks
// only the asks it takes, never the waiters holding a departure ahead of
// them, and allocates only the batch.

// queueLocked numbers p as the latest entry (pending.queued) and queues
// it for the next batch (enterLocked). Requires group.mu.
func (g *group) queueLocked(win *window, p *pending) {
	g.entries++
	p.queued = g.entries
	win.enterLocked(p)
}

// enterLocked queues p, numbered, for the next batch: a waiter's ask in
// the window's front (it waits there already), any other operation in the
// flight's queue (insertByPriority). Requires group.mu.
func (win *window) enterLocked(p *pending) {
	if p.fair == nil {
		win.flight.queue = insertByPriority(win.flight.queue, p)
		return
	}
	p.asking, p.fair.Ask = true, p
	if s := p.fair.Seq(); win.asking == 0 || s < win.cursor {
		win.cursor = s
	}
	win.asking++
}

// insertByPriority queues p behind every operation of its priority or
// higher queued before it (pending.queued), ahead of the others (SPEC.md,
// "Priorities"); the ends of admissions (highest) go ahead of every
// admission, in their order.
func insertByPriority(q []*pending, p *pending) []*pending {
	i := len(q)
	for i > 0 && (q[i-1].prio < p.prio || q[i-1].prio == p.prio && q[i-1].queued > p.queued) {
		i--
	}
	return slices.Insert(q, i, p)
}

// queuedLocked returns the operations queued for the next batch. Requires
// group.mu.
func (win *window) queuedLocked() int { return len(win.flight.queue) + win.asking }

// unqueueLocked takes p, queued for the next batch, out of the queue, and
// reports whether it was there (else it is in flight, or answered).
// Requires group.mu.
func (win *window) unqueueLocked(p *pending) bool {
	if p.asking {
		p.asking = false
		win.asking--
		return true
	}
	i := slices.Index(win.flight.queue, p)
	if i >= 0 {
		win.flight.queue = slices.Delete(win.flight.queue, i, i+1)
	}
	return i >= 0
}

// asksLocked appends to out the asks of win's front that wait for the
// next batch, in the front's order: all is the front's order (All), or
// nil while it is FIFO, when at most n are walked from the cursor (n < 0:
// all). Requires group.mu.
func (win *window) asksLocked(all []*front.Waiter, out []*pending, n int) []*pending {
	if n < 0 || n > win.asking {
		n = win.asking
	}
	yield := func(w *front.Waiter) bool {
		if p := w.Ask.(*pending); p.asking {
			out = append(out, p)
			n--
		}
		return n > 0
	}
	switch {
	case n == 0:
	case all == nil:
		win.front.FIFOFrom(win.cursor, yield)
	default:
		for _, w := range all {
			if !yield(w) {
				break
			}
		}
	}
	return out
}

// nextBatchLocked takes the next batch, of at most room operations
// (above), out of the queue; all is the front's order, nil while FIFO.
// Requires group.mu.
func (win *window) nextBatchLocked(all []*front.Waiter, room int) []*pending {
	batch := win.batchLocked(all, room)
	win.takenLocked(batch, all)
	return batch
}

// batchLocked returns the next batch (nextBatchLocked) and changes
// nothing. Requires group.mu.
func (win *window) batchLocked(all []*front.Waiter, room int) []*pending {
	q := win.flight.queue
	allows := slices.ContainsFunc(q, func(p *pending) bool { return p.req.how == "" })
	batch := make([]*pending, 0, min(room, len(q)+win.asking))
	for _, p := range q {
		if p.req.how != "" {
			batch = append(batch, p)
		}
	}
	if !allows {
		batch = win.asksLocked(all, batch, max(0, room-len(batch)))
	} else {
		rest := win.asksLocked(all, nil, -1)
		for _, p := range q {
			if p.req.how == "" {
				rest = append(rest, p)
			}
		}
		placeAllows(rest)
		batch = append(batch, rest...)
	}
	return batch[:min(len(batch), room)]
}

// takenLocked takes the operations of batch out of the queue, and moves
// the cursor to the first ask left. Requires group.mu.
func (win *window) takenLocked(batch []*pending, all []*front.Waiter) {
	var last *pending // the last ask taken
	taken := false    // an operation of the flight's queue is
	for _, p := range batch {
		if p.asking {
			p.asking, last = false, p
			win.asking--
		} else {
			taken = true
		}
	}
	if taken {
		win.flight.queue = slices.DeleteFunc(win.flight.queue, func(p *pending) bool { return slices.Contains(batch, p) })
	}
	switch {
	case win.asking == 0, last == nil:
	case all == nil:
		// FIFO: the asks taken were the first in arrival order.
		win.cursor = last.fair.Seq() + 1
	default:
		first := true
		for _, w := range all {
			if p := w.Ask.(*pending); p.asking && (first || w.Seq() < win.cursor) {
				win.cursor, first = w.Seq(), false
			}
		}
	}
}

// leaderLocked returns the operation with a caller that leads the next
// batch: an end's, else the first ask in the front's order (all, nil
// while FIFO), else the first Allow's; nil if none is queued (the queue
// holds the group's own withdrawals, or nothing). Requires group.mu.
func (win *window) leaderLocked(all []*front.Waiter) *pending {
	q := win.flight.queue
	if i := slices.IndexFunc(q, func(p *pending) bool { return p.done != nil && p.req.how != "" }); i >= 0 {
		return q[i]
	}
	var first [1]*pending
	if asks := win.asksLocked(all, first[:0], 1); len(asks) > 0 {
		return asks[0]
	}
	if i := slices.IndexFunc(q, func(p *pending) bool { return p.done != nil }); i >= 0 {
		return q[i]
	}
	return nil
}
