package rxthrottle

import (
	"time"

	"github.com/rxthrottle/rxthrottle/internal/adaptive"
)

// The holds out: a Bucket's Tokens, in the log that keeps them in
// departure order (holdLog), their timeouts, and the tokens they keep from
// the window until they end; and its untimed holds, a count of tokens held
// with no Token and no timeout, which their holder completes at instants it
// gives (completeUntimedLocked) or gives back (giveBackUntimedLocked).
// Only the operators hold tokens so, through itemGate (operator_hold.go);
// the rest of the Bucket sees them only as tokens held.

// expireHoldsLocked ends the holds whose timeout has passed at now: each
// completes at its deadline, so it renews W after departure + hold
// timeout, exactly, however late this runs. Requires b.mu. Its common
// case, the first hold kept live and not yet due (or none live), returns
// before the loop; the hot paths (Acquire, Release) ask mayBeDue
// themselves, which is inlined, and call expireHoldsDueLocked only if so.
func (b *Bucket) expireHoldsLocked(now int64) {
	if b.holds.mayBeDue(now) {
		b.expireHoldsDueLocked(now)
	}
}

// mayBeDue reports whether a live hold may be due at now: one is live, and
// the first hold kept has ended (the oldest live one is further on) or is
// due itself. Deadlines are in departure order, so if it is live and not
// due, none is. l may be nil.
func (l *holdLog) mayBeDue(now int64) bool {
	if l == nil || l.live == 0 {
		return false
	}
	h := &l.items[l.head]
	return !h.live || h.deadline <= now
}

// expireHoldsDueLocked is expireHoldsLocked past its check. Requires b.mu.
func (b *Bucket) expireHoldsDueLocked(now int64) {
	for b.holds != nil && b.holds.live > 0 {
		h := b.holds.oldest()
		if h.deadline > now {
			return
		}
		b.holds.end(b.holds.first+uint64(b.holds.head), h.deadline, true)
		for range h.n {
			b.win.recordAt(h.deadline)
		}
	}
}

// heldLocked returns the tokens granted and not yet completed or given
// back: the Tokens' and the untimed holds'. Requires b.mu.
func (b *Bucket) heldLocked() int {
	if b.holds == nil {
		return 0
	}
	return b.holds.untimed + b.holds.n
}

// untimedLocked returns the tokens of the untimed holds. Requires b.mu.
func (b *Bucket) untimedLocked() int {
	if b.holds == nil {
		return 0
	}
	return b.holds.untimed
}

// tokensHeldLocked returns the tokens the Tokens hold (Stats.Held).
// Requires b.mu.
func (b *Bucket) tokensHeldLocked() int {
	if b.holds == nil {
		return 0
	}
	return b.holds.n
}

// completeUntimedLocked completes n tokens of the untimed holds at off:
// they renew W after it, and off is their departure too, for the spacing
// (an untimed hold departs when its holder says, not at its grant; see
// freeAtLocked). Requires b.mu and n untimed tokens held.
func (b *Bucket) completeUntimedLocked(n int, off int64) {
	if n == 0 {
		return
	}
	for range n {
		b.win.record(off)
	}
	b.win.depart(off)
	b.holds.untimed -= n
}

// giveBackUntimedLocked gives n tokens of the untimed holds back unused,
// as if their grant had never been, and re-plans the queue. Requires b.mu
// and n untimed tokens held.
func (b *Bucket) giveBackUntimedLocked(n int) {
	b.holds.untimed -= n
	b.uncountLocked()
	b.dispatchLocked(b.now())
}

// holdLogLocked returns b.holds, made on first use. Requires b.mu.
func (b *Bucket) holdLogLocked() *holdLog {
	if b.holds == nil {
		b.holds = b.newHoldLog()
	}
	return b.holds
}

// hold is one Token's state in its Bucket.
type hold struct {
	deadline int64 // departure + hold timeout
	start    int64 // departure
	n        int
	open     int32 // holds open at its departure, itself included
	live     bool
}

// holdLog keeps the Tokens of a Bucket in departure order, so their
// deadlines are sorted and the oldest live one is the next to time out.
// Ids are consecutive: a hold is found by its id in O(1), and ended holds
// are dropped from the front as the live ones ahead of them end.
type holdLog struct {
	items []hold
	head  int    // items[head] is the oldest hold not yet dropped
	first uint64 // the id of items[0]
	live  int    // holds still live
	n     int    // tokens they hold
	// untimed is the tokens of the untimed holds (grantHold): held with
	// no Token and no timeout until completeUntimedLocked or
	// giveBackUntimedLocked, and not in Stats.Held.
	untimed int
	// ended counts the holds that ended completed (released or timed
	// out), and heldFor sums their lengths, ns (Stats.Released,
	// Stats.TotalHold).
	ended   uint64
	heldFor int64
	// adapt is WithAdaptiveConcurrency's cap, fed with the latency of each
	// hold that ends completed (released, or timed out); nil without it.
	adapt *adaptive.Limiter
}

// add starts a hold of n tokens at start until deadline and returns its
// id. It is small enough to be inlined (Acquire's hot path, whatever the
// holds out): the ended front is dropped in oldest, not here.
func (l *holdLog) add(start, deadline int64, n int) uint64 {
	l.items = append(l.items, hold{})
	// Field by field: a composite literal is built on the stack and copied
	// in 16 bytes at a time, a load that cannot be forwarded from the 8-byte
	// stores just made (a stall of a few ns, a tenth of Acquire+Release).
	h := &l.items[len(l.items)-1]
	h.deadline, h.start, h.n, h.open, h.live = deadline, start, n, int32(l.live+1), true
	l.live++
	l.n += n
	return l.first + uint64(len(l.items)-1)
}

// oldest returns the oldest live hold; there must be one. It drops the
// ended ones in front of it on the way, and reclaims their room once they
// are more than half the log (so that add need not).
func (l *holdLog) oldest() hold {
	for !l.items[l.head].live {
		l.head++
	}
	if l.head > 32 && l.head*2 > len(l.items) {
		k := copy(l.items, l.items[l.head:])
		l.items = l.items[:k]
		l.first += uint64(l.head)
		l.head = 0
	}
	return l.items[l.head]
}

// end ends hold id at now if it is live and returns its tokens; completed
// says the call it paid for completed (its latency is a sample for the
// adaptive cap). l may be nil.
func (l *holdLog) end(id uint64, now int64, completed bool) (n int, ok bool) {
	if l == nil {
		return 0, false
	}
	if id < l.first+uint64(l.head) || id-l.first >= uint64(len(l.items)) {
		return 0, false
	}
	h := &l.items[id-l.first]
	if !h.live {
		return 0, false
	}
	h.live = false
	n = h.n
	if completed {
		l.ended++
		l.heldFor += now - h.start
		if l.adapt != nil {
			l.adapt.Sample(h.start, now, int(h.open))
		}
	}
	l.live--
	l.n -= n
	if l.live == 0 { // nothing live: start afresh without reallocating
		l.first += uint64(len(l.items))
		l.items, l.head = l.items[:0], 0
	}
	return n, true
}

// endedCount returns how many holds ended completed; l may be nil.
func (l *holdLog) endedCount() uint64 {
	if l == nil {
		return 0
	}
	return l.ended
}

// heldTotal returns the sum of the completed holds' lengths; l may be nil.
func (l *holdLog) heldTotal() time.Duration {
	if l == nil {
		return 0
	}
	return time.Duration(l.heldFor)
}

// nextDeadline returns the deadline of the oldest live hold, or never. l
// may be nil.
func (l *holdLog) nextDeadline() int64 {
	if l == nil || l.live == 0 {
		return never
	}
	return l.oldest().deadline
}
