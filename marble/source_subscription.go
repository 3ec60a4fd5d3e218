package marble

import (
	"context"
	"time"

	"github.com/reactivex/rxgo/v2"
)

// subscription is one Observe of a source. The driver appends the due
// events to pending at their exact instants; the producer goroutine
// forwards them downstream at its own pace. So a slow downstream (a
// throttle holding items back) never delays later source events: they are
// already in pending, stamped with their own time.
type subscription struct {
	src        *source
	record     int // index in src.log
	signal     chan struct{}
	subscribed time.Duration
	seq        uint64 // tie-break of its emissions; see subscribe

	ctx  context.Context  // the subscriber's
	next chan<- rxgo.Item // the subscriber's channel

	// The fields below require that s.mu is held.
	pending []pendingEvent
	active  bool
	busy    bool // the producer is forwarding a batch
}

type pendingEvent struct {
	sourceEvent
	at time.Duration
}

// deliver queues e for the producer; it requires that s.mu is held.
func (sub *subscription) deliver(e pendingEvent) {
	if !sub.active {
		return
	}
	// Hand a value straight to a downstream that is already waiting for
	// it, without waking the producer: a third fewer goroutine switches
	// per event. Only when nothing is queued before it and the producer
	// is idle, so the order holds.
	if e.kind == Next && !sub.busy && len(sub.pending) == 0 && sub.ctx.Err() == nil && sub.src.s.ctx.Err() == nil {
		select {
		case sub.next <- e.item:
			return
		default:
		}
	}
	sub.pending = append(sub.pending, e)
	select {
	case sub.signal <- struct{}{}:
	default:
	}
}

// subscribe registers a new subscriber at the current instant.
func (src *source) subscribe(ctx context.Context, next chan<- rxgo.Item) *subscription {
	s := src.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.elapsed()
	sub := &subscription{
		src:        src,
		ctx:        ctx,
		next:       next,
		record:     len(src.log),
		signal:     make(chan struct{}, 1),
		subscribed: now,
		// At one instant, sources emit in the order they were created
		// in fn, which is deterministic; the order in which subscribers
		// reach Observe is not (rxgo subscribes from goroutines), so it
		// only breaks ties between subscriptions of one source.
		seq:    src.seq<<32 | uint64(len(src.log)+1),
		active: true,
	}
	src.log = append(src.log, subscriptionRecord{subscribed: now})
	switch {
	case src.hot && src.ended:
		sub.deliver(pendingEvent{sourceEvent: src.ending, at: now})
	case src.hot:
		src.subs = append(src.subs, sub)
	case len(src.events) > 0:
		src.emitFrom(0, sub)
		s.reach(now + src.events[len(src.events)-1].offset)
	}
	return sub
}

// produce is the rxgo.Producer of a source: one call per Observe, on a
// goroutine rxgo.Defer starts for the subscriber. ctx is the subscriber's
// context if it passed one down (rxgo propagates WithContext from Observe
// to the source), else the run's.
func (src *source) produce(ctx context.Context, next chan<- rxgo.Item) {
	s := src.s
	if s.progress.ended.Load() {
		src.produceForeign(ctx, next)
		return
	}
	sub := src.subscribe(ctx, next)
	for {
		s.mu.Lock()
		batch := sub.pending
		sub.pending = nil
		sub.busy = len(batch) > 0
		s.mu.Unlock()
		for _, e := range batch {
			if e.kind == Complete {
				src.end(sub, e.at)
				return
			}
			// A cancelled subscriber gets nothing more, even if it
			// happens to be ready to receive.
			if ctx.Err() != nil || s.ctx.Err() != nil {
				src.cancelled(sub)
				return
			}
			if !send(ctx, s.ctx, next, e.item) {
				src.cancelled(sub)
				return
			}
			if e.kind == Error {
				src.end(sub, e.at)
				return
			}
		}
		select {
		case <-sub.signal:
		case <-ctx.Done():
			src.cancelled(sub)
			return
		case <-s.ctx.Done():
			src.cancelled(sub)
			return
		}
	}
}

// send hands item to next unless ctx or run ends first.
func send(ctx, run context.Context, next chan<- rxgo.Item, item rxgo.Item) bool {
	select {
	case next <- item: // the downstream is waiting: the usual case
		return true
	default:
	}
	select {
	case next <- item:
		return true
	case <-ctx.Done():
		return false
	case <-run.Done():
		return false
	}
}

// end records that sub ended with the source's | or #, at the instant of
// that symbol (not when a slow subscriber got it), as rxjs logs it.
func (src *source) end(sub *subscription, at time.Duration) {
	src.s.mu.Lock()
	defer src.s.mu.Unlock()
	src.detach(sub, at)
}

// cancelled records that the subscriber went away now. Cancellation by the
// end of Run is not an unsubscription: the test is over by then.
func (src *source) cancelled(sub *subscription) {
	s := src.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		sub.active = false
		return
	}
	src.detach(sub, s.elapsed())
}

// detach ends sub at instant at; it requires that s.mu is held.
func (src *source) detach(sub *subscription, at time.Duration) {
	if !sub.active {
		return
	}
	sub.active = false
	src.log[sub.record].unsubscribed = at
	src.log[sub.record].ended = true
	for i, hs := range src.subs {
		if hs == sub {
			src.subs = append(src.subs[:i], src.subs[i+1:]...)
			break
		}
	}
}
