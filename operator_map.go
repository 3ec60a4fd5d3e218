package rxthrottle

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/reactivex/rxgo/v2"
)

// ThrottleMap returns an rxgo operator that calls fn for each item within
// limit (and every WithLimit), holding a token for each call: the rxgo way
// to call a rate-limited API with the guarantee at the server. Each item
// waits for a token, in order; fn(ctx, item) runs while the token is held
// (so as many calls run at once as there are tokens), and the token is
// released when fn returns: it renews one window after the call ended, not
// after it started (SPEC.md, "Held tokens"), so however long a request takes
// to reach the server, the server never sees more than the quota in a
// window.
//
// The outputs keep the input order: output i goes as soon as fn has
// returned for item i and output i-1 has gone. An error returned by fn (or
// a panic in fn, as a *PanicError) becomes an error item in that item's
// place, and the later items go on. Error items from the source take no
// token, never reach fn, and keep their place. The output completes right
// after the last output.
//
// Like Throttle, it is lazy and each Observe gets a Bucket of its own (use
// ThrottleMapWith to share a quota); it reads the options of NewBucket
// (WithHoldTimeout bounds a call that never returns). Cancelling the
// context given with rxgo.WithContext to Observe stops everything: fn's
// context ends at that instant, no other call starts, and the output closes
// once the calls running have returned, so fn should return when its
// context ends. If the downstream is slow, ThrottleMap takes no new token
// while more than a few results wait for it. With an invalid limit or
// option, a nil fn or a nil source, the Observable emits one error item.
func ThrottleMap(limit Limit, fn rxgo.Func, opts ...Option) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			b, err := NewBucket(limit, opts...)
			if err == nil && fn == nil {
				err = errors.New("rxthrottle: ThrottleMap: the function is nil")
			}
			if err != nil {
				rxgo.Error(err).SendContext(ctx, next)
				return
			}
			runMap(ctx, "ThrottleMap", src, b, fn, next)
		}})
	}
}

// ThrottleMapWith returns an rxgo operator like ThrottleMap that takes its
// tokens from l, a Limiter shared with other pipelines and callers (a
// *Bucket, a Redis-backed bucket). If l fails (it returns an error while the
// subscription is live), the item that waited gets no call: in its place the
// output emits an error item that says which item got no token and wraps
// l's error, after the outputs of the calls already started, and then
// completes; the source is cancelled. As for ThrottleWith, this is rxgo's
// default error strategy (rxgo.StopOnError) for an operator's own failure,
// whereas fn's errors concern one item each and let the others go on. With
// a nil l or fn, or a nil source, the Observable emits one error item.
func ThrottleMapWith(l Limiter, fn rxgo.Func) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			var err error
			switch b, isBucket := l.(*Bucket); {
			case isNil(l):
				err = errors.New("rxthrottle: ThrottleMapWith(nil, ...): a Limiter is required")
			case isBucket:
				err = usableBucket("ThrottleMapWith", b)
			}
			if err == nil && fn == nil {
				err = errors.New("rxthrottle: ThrottleMapWith: the function is nil")
			}
			if err != nil {
				rxgo.Error(err).SendContext(ctx, next)
				return
			}
			runMap(ctx, "ThrottleMapWith", src, l, fn, next)
		}})
	}
}

// mapBacklog is how many results, ready and in order, may wait for a slow
// downstream before ThrottleMap stops taking tokens.
const mapBacklog = 16

// mapper runs one ThrottleMap subscription. One goroutine, the acquirer,
// reads the source and takes a token for each item in order; it hands the
// item and its token to a worker goroutine (an idle one, or a new one),
// which calls fn, releases the token and records the result in the item's
// slot. Whoever completes the first slot not yet sent sends it downstream,
// and the slots after it that are complete too, so that results go in
// input order without a goroutine of their own.
type mapper struct {
	op   string
	l    Limiter
	fn   rxgo.Func
	ctx  context.Context // the subscription's: fn's context
	next chan<- rxgo.Item

	jobs chan mapJob  // to idle workers; closed when the acquirer ends
	idle atomic.Int64 // workers free to take a job, less those reserved
	wg   sync.WaitGroup

	mu       sync.Mutex
	slots    []*mapSlot // slots[head:] are not yet sent, in input order
	head     int
	free     []*mapSlot // sent, for reuse
	ready    int        // how many slots from head on are complete
	emitting bool       // a goroutine is sending the leading slots
	acqDone  bool       // the acquirer has ended: no slot will be added
	closed   bool       // the output is ending: send nothing more
	finished chan struct{}
	ended    bool          // finished is closed
	roomWait bool          // the acquirer waits for the backlog to drain
	room     chan struct{} // signals it, capacity 1
}

// mapSlot is one item's place in the output.
type mapSlot struct {
	item rxgo.Item // the output, once complete
	done bool
}

// mapJob is one call of fn, with its token held.
type mapJob struct {
	slot *mapSlot
	seq  int // the item's position in the source, for errors
	v    any
	tok  Token
}

func runMap(ctx context.Context, op string, src rxgo.Observable, l Limiter, fn rxgo.Func, next chan<- rxgo.Item) {
	srcCtx, cancelSrc := context.WithCancel(ctx)
	defer cancelSrc()
	in, err := observe(srcCtx, op, src)
	if err != nil {
		rxgo.Error(err).SendContext(ctx, next)
		return
	}
	m := &mapper{op: op, l: l, fn: fn, ctx: ctx, next: next,
		jobs: make(chan mapJob, 64), finished: make(chan struct{}), room: make(chan struct{}, 1)}
	m.wg.Go(func() {
		defer cancelSrc() // a source no longer read must not block
		m.acquire(srcCtx, in)
	})
	select {
	case <-ctx.Done():
	case <-m.finished:
	}
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	// Nothing may send on next once this returns: rxgo closes it.
	m.wg.Wait()
}

// acquire is the acquirer's loop.
func (m *mapper) acquire(ctx context.Context, in <-chan rxgo.Item) {
	defer func() {
		close(m.jobs)
		m.mu.Lock()
		m.acqDone = true
		m.checkFinishedLocked()
		m.mu.Unlock()
	}()
	seq := 0
	full := false // the backlog was full at the last add
	for {
		var item rxgo.Item
		var ok bool
		select { // without a select on ctx when an item is there
		case item, ok = <-in:
		default:
			select {
			case <-ctx.Done():
				return
			case item, ok = <-in:
			}
		}
		if !ok {
			return
		}
		seq++
		if item.Error() { // no token, no call
			_, full = m.add(item, true)
			m.emit()
			continue
		}
		if full && !m.waitRoom(ctx) {
			return
		}
		tok, err := m.token(ctx, seq)
		if err != nil {
			if !stopped(ctx) {
				m.add(rxgo.Error(err), true)
				m.emit()
			}
			return
		}
		var slot *mapSlot
		slot, full = m.add(rxgo.Item{}, false)
		m.dispatch(mapJob{slot: slot, seq: seq, v: item.V, tok: tok})
	}
}

// token takes a token of m.l for item seq, turning a failure or a panic of
// the Limiter into the error to emit.
func (m *mapper) token(ctx context.Context, seq int) (tok Token, err error) {
	defer func() {
		if r := recover(); r != nil {
			tok, err = Token{}, recovered(r, m.op+": the Limiter", seq)
		}
	}()
	tok, err = m.l.Acquire(ctx)
	if err != nil {
		return Token{}, errNoToken(m.op, seq, err)
	}
	return tok, nil
}

// waitRoom waits while mapBacklog results wait for the downstream. It
// returns false if ctx ended or the output is closing.
func (m *mapper) waitRoom(ctx context.Context) bool {
	for {
		m.mu.Lock()
		if m.closed || m.ready < mapBacklog {
			closed := m.closed
			m.mu.Unlock()
			return !closed
		}
		m.roomWait = true
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return false
		case <-m.room:
		}
	}
}

// add appends a slot for item, complete or not, and returns it, and
// whether mapBacklog results wait for the downstream. A complete slot
// extends the complete prefix.
func (m *mapper) add(item rxgo.Item, done bool) (*mapSlot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s *mapSlot
	if n := len(m.free); n > 0 {
		s = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		s = new(mapSlot)
	}
	s.item, s.done = item, done
	if m.head > 32 && m.head*2 > len(m.slots) { // reclaim the sent front
		k := copy(m.slots, m.slots[m.head:])
		clear(m.slots[k:])
		m.slots = m.slots[:k]
		m.head = 0
	}
	m.slots = append(m.slots, s)
	if done && m.ready == len(m.slots)-m.head-1 {
		m.ready++
	}
	return s, m.ready >= mapBacklog
}

// dispatch hands j to an idle worker, or to a new one if none is idle.
func (m *mapper) dispatch(j mapJob) {
	if m.idle.Add(-1) >= 0 { // reserved: an idle worker will take it
		m.jobs <- j
		return
	}
	m.idle.Add(1)
	m.wg.Go(func() { m.work(j) })
}

// work is a worker's loop: call fn for j, then wait idle for the next job.
func (m *mapper) work(j mapJob) {
	for {
		m.complete(j.slot, m.call(j))
		m.idle.Add(1)
		var ok bool
		if j, ok = <-m.jobs; !ok {
			return
		}
	}
}

// call runs fn for j with its token held, and releases the token when fn
// returns, whatever it returns, even a panic (the call may have reached the
// server).
func (m *mapper) call(j mapJob) (item rxgo.Item) {
	defer j.tok.Release()
	defer func() {
		if r := recover(); r != nil {
			item = rxgo.Error(recovered(r, m.op+": the function", j.seq))
		}
	}()
	v, err := m.fn(m.ctx, j.v)
	if err != nil {
		return rxgo.Error(err)
	}
	return rxgo.Of(v)
}

// complete records s's output, extends the complete prefix and sends it.
func (m *mapper) complete(s *mapSlot, item rxgo.Item) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.item, s.done = item, true
	for m.ready < len(m.slots)-m.head && m.slots[m.head+m.ready].done {
		m.ready++
	}
	m.emitLocked()
}

// emit sends the complete slots at the head, unless another goroutine is
// doing so already (it will see them: slots are completed under m.mu).
func (m *mapper) emit() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.emitLocked()
}

// emitLocked is emit. Requires m.mu, which it releases while it sends.
func (m *mapper) emitLocked() {
	if m.emitting {
		return
	}
	m.emitting = true
	for m.ready > 0 && !m.closed {
		s := m.slots[m.head]
		m.slots[m.head] = nil
		if m.head++; m.head == len(m.slots) {
			m.slots, m.head = m.slots[:0], 0
		}
		m.ready--
		m.mu.Unlock()
		ok := sendItem(m.ctx, m.next, s.item)
		m.mu.Lock()
		if !ok {
			m.closed = true
		}
		s.item = rxgo.Item{}
		m.free = append(m.free, s)
	}
	m.emitting = false
	if m.roomWait && m.ready < mapBacklog {
		m.roomWait = false
		select {
		case m.room <- struct{}{}:
		default:
		}
	}
	m.checkFinishedLocked()
}

// checkFinishedLocked signals the end of the output once the acquirer has
// ended and every slot has been sent. Requires m.mu.
func (m *mapper) checkFinishedLocked() {
	if !m.ended && m.acqDone && len(m.slots) == m.head && !m.emitting {
		m.ended = true
		close(m.finished)
	}
}

// sendItem sends item on next unless ctx ends first, without a select on
// ctx if next takes it at once.
func sendItem(ctx context.Context, next chan<- rxgo.Item, item rxgo.Item) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case next <- item:
		return true
	default:
		return item.SendContext(ctx, next)
	}
}
