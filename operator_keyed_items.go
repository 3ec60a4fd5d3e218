package rxthrottle

import (
	"context"
	"fmt"

	"github.com/reactivex/rxgo/v2"
)

// The life of a ThrottleBy item after the source (operator_keyed.go): its
// token, its key, its place behind the items before it, its grant, its
// send downstream.

// acquire asks kl for ki's token on a goroutine of its own, once the item
// of the same key before it has gone downstream (passTailLocked), so that a
// key's items go in order, no key holds up another's, and a key holds one
// token at a time for an item not yet taken: an item granted behind
// others of its key would hold its token while the downstream is slow,
// until it timed out and went to waste (sendHeld then takes a new one).
func (f *keyedForwarder) acquire(ki *keyedItem, key string) {
	f.unsent++
	ki.held = true
	done := make(chan struct{})
	f.mu.Lock()
	f.waiting[ki] = struct{}{}
	prev := f.tails[key]
	f.tails[key] = done
	ki.key, ki.tail = key, done
	f.mu.Unlock()
	f.wg.Go(func() {
		if prev != nil {
			select {
			case <-prev:
			case <-f.acquiring.Done():
			}
		}
		tok, err := f.acquireToken(key, ki.seq)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.closed {
			f.passTailLocked(ki)
			tok.Cancel()
			return
		}
		delete(f.waiting, ki)
		if err != nil {
			ki.item = rxgo.Error(&itemError{op: "ThrottleByWith", item: ki.seq, err: err})
		}
		ki.tok, ki.since = tok, f.renew.clock.Now()
		f.pushLocked(ki)
	})
}

// passTailLocked lets the next item of ki's key ask for its token: ki has
// gone downstream, or never will. Requires f.mu.
func (f *keyedForwarder) passTailLocked(ki *keyedItem) {
	if ki.tail == nil {
		return
	}
	if f.tails[ki.key] == ki.tail {
		delete(f.tails, ki.key)
	}
	close(ki.tail)
	ki.tail = nil
}

// acquireToken is kl.Acquire, with a panic turned into an error.
func (f *keyedForwarder) acquireToken(key string, seq int) (tok Token, err error) {
	defer func() {
		if perr := recovered(recover(), "ThrottleByWith: the KeyedLimiter", seq); perr != nil {
			err = perr
		}
	}()
	if err = f.acquiring.Err(); err != nil {
		return Token{}, err
	}
	return f.kl.Acquire(f.acquiring, key)
}

// keyOf returns the key of ki's value, or the error item's error for an
// empty key or a key function that panics.
func (f *keyedForwarder) keyOf(ki *keyedItem) (key string, err error) {
	defer func() {
		if perr := recovered(recover(), "ThrottleBy: the key function", ki.seq); perr != nil {
			err = perr
		}
	}()
	key = f.key(ki.item.V)
	if key == "" {
		return "", fmt.Errorf("rxthrottle: ThrottleBy: empty key for item #%d (%v)", ki.seq, ki.item.V)
	}
	return key, nil
}

// errorItem makes an error item ready if every item before it has been
// sent, or else puts it behind them.
func (f *keyedForwarder) errorItem(ki *keyedItem) {
	if f.unsent == 0 && len(f.barriers) == 0 {
		f.push(ki)
		return
	}
	ki.before = f.unsent
	f.barriers = append(f.barriers, ki)
}

// sent accounts for a token item sent downstream, and makes ready, at the
// head of the ready queue, the error items that were waiting for it and
// for nothing else: they go right after it.
func (f *keyedForwarder) sent(ki *keyedItem) {
	f.unsent--
	for _, e := range f.barriers {
		if e.seq > ki.seq {
			e.before--
		}
	}
	n := 0
	for n < len(f.barriers) && f.barriers[n].before == 0 {
		n++
	}
	if n == 0 {
		return
	}
	f.mu.Lock()
	f.ready = append(f.barriers[:n:n], f.ready...)
	f.mu.Unlock()
	f.barriers = f.barriers[n:]
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
	return len(f.ready) > 0 || len(f.waiting) > 0 || len(f.barriers) > 0
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
		if ki.held && !ki.item.Error() {
			sent := f.sendHeld(ctx, ki)
			f.mu.Lock()
			f.passTailLocked(ki)
			f.mu.Unlock()
			if !sent {
				return false
			}
			f.sent(ki)
			continue
		}
		if ki.held {
			f.mu.Lock()
			f.passTailLocked(ki) // an error item in its place: the key goes on
			f.mu.Unlock()
		}
		if !ki.item.SendContext(ctx, f.next) {
			if ki.b != nil {
				ki.b.giveBack()
			}
			ki.tok.Cancel()
			return false
		}
		switch {
		case ki.b != nil:
			ki.b.flush(0, 0, 1)
			f.sent(ki)
		case ki.held:
			ki.tok.Release() // the downstream has it: the token renews from now
			f.sent(ki)
		}
	}
}

// sendHeld sends ki, an item over kl with its token, changing the token
// for a new one of its key before its hold can time out (sendHeld,
// operator_renew.go). An item whose new token fails goes as an error item
// in its place, and the stream goes on, as one whose first Acquire
// failed; it reports false once ctx ended.
func (f *keyedForwarder) sendHeld(ctx context.Context, ki *keyedItem) bool {
	again := func() (Token, error) { return f.acquireToken(ki.key, ki.seq) }
	sent, err := sendHeld(ctx, f.renew, f.next, ki.item, ki.tok, ki.since, again)
	ki.tok = Token{}
	if err == nil || ctx.Err() != nil {
		return sent
	}
	return rxgo.Error(&itemError{op: "ThrottleByWith", item: ki.seq, err: err}).SendContext(ctx, f.next)
}

// abandon, on the way out, withdraws the items still waiting for a token
// and gives back the tokens of granted items never sent.
func (f *keyedForwarder) abandon() {
	if f.kl != nil {
		f.mu.Lock()
		f.closed = true // a token that comes from now on goes back
		f.mu.Unlock()
		f.stop()
		f.wg.Wait()
	}
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
		ki.b.withdraw(ki.w)
	}
	f.mu.Lock()
	ready := f.ready
	f.ready = nil
	f.mu.Unlock()
	for _, ki := range ready {
		if ki.b != nil {
			ki.b.giveBack()
		}
		ki.tok.Cancel()
	}
}
