package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reactivex/rxgo/v2"
)

// ThrottleBy returns an rxgo operator that throttles items per key: key
// gives each item's key (a user, a tenant, a host), and each key has limit
// (and every WithLimit) to itself, by SPEC.md's schedule over its own items.
// An item only ever waits behind items of its own key: there is no
// head-of-line blocking across keys. Order is kept within a key; across
// keys, items go in the order their tokens are granted (items of different
// keys granted at the same instant may come in either order).
//
// Like Throttle, it is lazy, each Observe gets a Keyed limiter of its own
// (use ThrottleByWith to share one), error items pass through without a
// token, and cancelling the Observe context stops everything. An item whose
// key is empty, or a new key beyond WithMaxKeys, becomes an error item in
// its place. ThrottleBy reads the options of NewKeyed.
func ThrottleBy(limit Limit, key func(any) string, opts ...Option) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			k, err := NewKeyed(limit, opts...)
			if err == nil && key == nil {
				err = errNilKeyFunc
			}
			if err != nil {
				rxgo.Error(err).SendContext(ctx, next)
				return
			}
			forwardKeyed(ctx, src, k, key, next)
		}})
	}
}

// ThrottleByWith is ThrottleBy on a Keyed limiter shared with other
// pipelines and callers.
func ThrottleByWith(k *Keyed, key func(any) string) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			switch {
			case k == nil:
				rxgo.Error(errors.New("rxthrottle: ThrottleByWith(nil, ...): a *Keyed is required")).SendContext(ctx, next)
			case key == nil:
				rxgo.Error(errNilKeyFunc).SendContext(ctx, next)
			default:
				forwardKeyed(ctx, src, k, key, next)
			}
		}})
	}
}

var errNilKeyFunc = errors.New("rxthrottle: ThrottleBy: the key function is nil")

// keyedItem is an item on its way through ThrottleBy.
type keyedItem struct {
	item rxgo.Item
	b    *Bucket // nil for an item that holds no token
	w    *waiter // nil if admitted at once
}

// keyedForwarder runs one ThrottleBy subscription. The loop reads the source
// without ever waiting for a token, so one key's wait never holds up
// another's items; the buckets' timers put granted items on the ready queue,
// and the loop sends them downstream in that order.
type keyedForwarder struct {
	k    *Keyed
	key  func(any) string
	next chan<- rxgo.Item

	mu      sync.Mutex
	ready   []*keyedItem // granted, to be sent, in grant order
	signal  chan struct{}
	waiting map[*keyedItem]struct{} // queued for a token; guarded by mu
	seen    int                     // items read, for error messages
}

func forwardKeyed(ctx context.Context, src rxgo.Observable, k *Keyed, key func(any) string, next chan<- rxgo.Item) {
	f := &keyedForwarder{k: k, key: key, next: next,
		signal: make(chan struct{}, 1), waiting: make(map[*keyedItem]struct{})}
	defer f.abandon()
	in := src.Observe(rxgo.WithContext(ctx))
	for in != nil || f.outstanding() {
		select {
		case <-ctx.Done():
			return
		case item, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			f.accept(item)
		case <-f.signal:
		}
		if !f.sendReady(ctx) {
			return
		}
	}
}

// accept takes a new item from the source: it queues it on its key's
// bucket, or puts it on the ready queue at once.
func (f *keyedForwarder) accept(item rxgo.Item) {
	f.seen++
	ki := &keyedItem{item: item}
	if item.Error() {
		f.push(ki)
		return
	}
	key := f.key(item.V)
	if key == "" {
		ki.item = rxgo.Error(fmt.Errorf("rxthrottle: ThrottleBy: empty key for item #%d (%v)", f.seen, item.V))
		f.push(ki)
		return
	}
	f.mu.Lock()
	f.waiting[ki] = struct{}{}
	f.mu.Unlock()
	b, w, err := f.k.arrive(key, true, func() { f.granted(ki) })
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil:
		delete(f.waiting, ki)
		ki.item = rxgo.Error(fmt.Errorf("item #%d: %w", f.seen, err))
		f.pushLocked(ki)
	case w == nil: // admitted at once
		delete(f.waiting, ki)
		ki.b = b
		f.pushLocked(ki)
	default:
		ki.b, ki.w = b, w
	}
}

// granted runs under the bucket's lock when a queued item gets its token.
func (f *keyedForwarder) granted(ki *keyedItem) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.waiting, ki)
	f.pushLocked(ki)
}

func (f *keyedForwarder) push(ki *keyedItem) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushLocked(ki)
}

func (f *keyedForwarder) pushLocked(ki *keyedItem) {
	f.ready = append(f.ready, ki)
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

func (f *keyedForwarder) outstanding() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ready) > 0 || len(f.waiting) > 0
}

// sendReady sends the ready items in order, recording each emission when the
// downstream has it.
func (f *keyedForwarder) sendReady(ctx context.Context) bool {
	for {
		f.mu.Lock()
		if len(f.ready) == 0 {
			f.mu.Unlock()
			return true
		}
		ki := f.ready[0]
		f.ready[0] = nil
		f.ready = f.ready[1:]
		f.mu.Unlock()
		if !ki.item.SendContext(ctx, f.next) {
			if ki.b != nil {
				ki.b.giveBack()
			}
			return false
		}
		if ki.b != nil {
			ki.b.flush(0, 0, 1)
		}
	}
}

// abandon, on the way out, withdraws the items still waiting for a token
// and gives back the tokens of granted items never sent.
func (f *keyedForwarder) abandon() {
	f.mu.Lock()
	queued := make([]*keyedItem, 0, len(f.waiting))
	for ki := range f.waiting {
		queued = append(queued, ki)
	}
	f.mu.Unlock()
	for _, ki := range queued {
		if ki.b == nil {
			continue
		}
		ki.b.mu.Lock()
		if ki.w.state == waiting {
			ki.b.cancelLocked(ki.w)
		}
		ki.b.mu.Unlock()
	}
	f.mu.Lock()
	ready := f.ready
	f.ready = nil
	f.mu.Unlock()
	for _, ki := range ready {
		if ki.b != nil {
			ki.b.giveBack()
		}
	}
}
