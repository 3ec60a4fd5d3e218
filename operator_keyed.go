package rxthrottle

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// ThrottleBy returns an rxgo operator that throttles items per key: key
// gives each item's key (a user, a tenant, a host), and each key has limit
// (and every WithLimit) to itself, by SPEC.md's schedule over its own items.
// An item only ever waits behind items of its own key: there is no
// head-of-line blocking across keys. Order is kept within a key; across
// keys, items go in the order their tokens are granted (items of different
// keys granted at the same instant may come in either order).
//
// An error item keeps its place behind the items that came before it: it
// goes right after the last of them has gone, and takes no token, so a
// consumer that stops at the first error (rxgo's default) has received
// every item the source emitted before it, as it would without ThrottleBy.
// It does not hold back the items that come after it: like the items of
// another key, they may go before it. An item that cannot have a token
// becomes such an error item in its place, saying which item and why, and
// the stream goes on: an empty key, a new key beyond WithMaxKeys
// (ErrTooManyKeys), or a key function that panics (a *PanicError).
//
// Like Throttle, it is lazy, each Observe gets a Keyed limiter of its own
// (use ThrottleByWith to share one), and cancelling the Observe context
// stops everything; every item has the Observe context's priority
// (WithPriority), which orders it against a shared limiter's other callers. With a nil key function or source, the Observable emits
// one error item. ThrottleBy reads the options of NewKeyed.
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
			run(ctx, "ThrottleBy", src, newKeyedForwarder(k, key), next)
		}})
	}
}

// ThrottleByWith is ThrottleBy on a KeyedLimiter shared with other
// pipelines and callers: a *Keyed, or any other, such as redisstore's
// Keyed. Over a limiter that is not a *Keyed, each item holds its token
// (Acquire) until the downstream has received it, the items of one key ask
// for their tokens one after the other, and an item whose Acquire fails
// becomes an error item, in the order the tokens come. An item not taken
// within half the hold timeout (k's HoldTimeout method's, else
// DefaultHoldTimeout) changes its Token for a new one, as ThrottleWith's.
func ThrottleByWith(k KeyedLimiter, key func(any) string) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			kk, isKeyed := k.(*Keyed)
			switch {
			case isNil(k):
				rxgo.Error(errors.New("rxthrottle: ThrottleByWith(nil, ...): a KeyedLimiter is required")).SendContext(ctx, next)
			case isKeyed && kk.clock == nil:
				rxgo.Error(errors.New("rxthrottle: ThrottleByWith: the *Keyed was not made by NewKeyed")).SendContext(ctx, next)
			case key == nil:
				rxgo.Error(errNilKeyFunc).SendContext(ctx, next)
			case isKeyed:
				run(ctx, "ThrottleByWith", src, newKeyedForwarder(kk, key), next)
			default:
				f := newKeyedForwarder(nil, key)
				f.kl, f.tails, f.renew = k, make(map[string]chan struct{}), renewalOf(k)
				run(ctx, "ThrottleByWith", src, f, next)
			}
		}})
	}
}

var errNilKeyFunc = errors.New("rxthrottle: ThrottleBy: the key function is nil")

// keyedItem is an item on its way through ThrottleBy.
type keyedItem struct {
	item  rxgo.Item
	seq   int      // its position in the source, from 1
	b     itemGate // its key's bucket; nil for an item that holds no token
	w     *waiter  // nil if admitted at once
	held  bool     // over another KeyedLimiter: counted in unsent; tok is its token
	tok   Token
	key   string    // over another KeyedLimiter: its key, to take a new token
	since time.Time // when tok was taken, on the renewal's clock
	// tail, over another KeyedLimiter, is closed once the item has gone
	// downstream (or never will): the next item of its key waits for it.
	tail   chan struct{}
	before int // for an error item: token items before it not yet sent
}

// keyedForwarder runs one ThrottleBy subscription. The loop reads the source
// without ever waiting for a token, so one key's wait never holds up
// another's items; the buckets' timers put granted items on the ready queue,
// and the loop sends them downstream in that order. An error item waits in
// barriers until the items before it have been sent.
type keyedForwarder struct {
	k  *Keyed
	kl KeyedLimiter // instead of k: any other KeyedLimiter
	// renew is how long an item over kl is offered under one Token
	// (operator_renew.go).
	renew renewal
	key   func(any) string
	next  chan<- rxgo.Item
	who   fairq.Caller // the subscription context's priority and tenant, every item's

	mu      sync.Mutex
	ready   []*keyedItem // granted, to be sent, in grant order
	signal  chan struct{}
	waiting map[*keyedItem]struct{} // queued for a token; guarded by mu

	// Over kl: the subscription's context for Acquire, the last item of
	// each key still acquiring (its channel closes when it is done), and
	// whether the forwarder has ended. Guarded by mu but for acquiring.
	acquiring context.Context
	stop      context.CancelFunc
	tails     map[string]chan struct{}
	closed    bool
	wg        sync.WaitGroup

	// Owned by the loop's goroutine.
	seen     int          // items read
	unsent   int          // items with a token (held or awaited) not yet sent
	barriers []*keyedItem // error items waiting for the items before them
}

func newKeyedForwarder(k *Keyed, key func(any) string) *keyedForwarder {
	return &keyedForwarder{k: k, key: key,
		signal: make(chan struct{}, 1), waiting: make(map[*keyedItem]struct{})}
}

func (f *keyedForwarder) run(ctx context.Context, in <-chan rxgo.Item, next chan<- rxgo.Item) {
	f.next, f.who = next, callerOf(ctx)
	if f.kl != nil {
		f.acquiring, f.stop = context.WithCancel(ctx)
	}
	defer f.abandon()
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
// bucket, or makes it ready at once, or (an error item) puts it behind the
// items before it.
func (f *keyedForwarder) accept(item rxgo.Item) {
	f.seen++
	ki := &keyedItem{item: item, seq: f.seen}
	if item.Error() {
		f.errorItem(ki)
		return
	}
	key, err := f.keyOf(ki)
	if err != nil {
		ki.item = rxgo.Error(err)
		f.errorItem(ki)
		return
	}
	if f.kl != nil {
		f.acquire(ki, key)
		return
	}
	f.mu.Lock()
	f.waiting[ki] = struct{}{}
	f.mu.Unlock()
	b, w, err := f.k.arrive(key, true, f.who, func() { f.granted(ki) })
	if err != nil {
		f.mu.Lock()
		delete(f.waiting, ki)
		f.mu.Unlock()
		ki.item = rxgo.Error(&itemError{op: "ThrottleBy", item: ki.seq, err: err})
		f.errorItem(ki)
		return
	}
	f.unsent++
	f.mu.Lock()
	defer f.mu.Unlock()
	ki.b, ki.w = b, w
	if w == nil { // admitted at once
		delete(f.waiting, ki)
		f.pushLocked(ki)
	}
}
