package rxthrottle

import (
	"time"
	"unsafe"
)

// keyEntry is one key of a Keyed limiter: its bucket, found in its shard's
// table by hash and key, and its tally (it counts the bucket's callers into
// the shard's aggregate and its processor's stripe, and names the key in
// hook events). Its lock is the bucket's; a caller that found the entry
// without the shard's lock checks, under the entry's lock, that it was not
// forgotten in between (lockLive).
//
// Its size is a whole number of pairs of cache lines (256 bytes;
// TestKeyEntrySize checks it), and Go's allocator places objects of such a
// size class at multiples of their size, so two entries, which different
// cores write, never share a line, nor a pair of lines: processors that
// fetch lines in pairs (the adjacent line prefetchers of x86) made two cores
// on disjoint keys of neighbouring 320-byte entries slower together than one
// alone (BENCHMARKS.md, "Keyed").
//
// Prefetchers also fetch the line after (or before) the one a core touches,
// which is a neighbouring entry's first (or last) line. So a call writes
// only a middle line of its entry, the second, and three lines nobody writes
// lie between it and any other entry's. The first line holds what a call
// only reads (the lookup's hash and key), then bytes nobody uses; the
// second the key's written state (keyState), then the start of the Bucket,
// which ends the entry: its lock and the window's written fields; the
// third and last the rest of the window, which a call reads and only some
// calls write (the ring's place, the limits, the pause), then the Bucket's
// settings and the pointers to its queue and holds (read, written once).
// The Bucket's own order (its lock and what it writes, then what it reads)
// puts its written fields at its start, and the key's state goes just
// before it; a Bucket of NewBucket is the same Bucket, with nothing of
// Keyed's. TestKeyEntryEdgeLinesAreReadOnly checks it.
type keyEntry struct {
	hash uint64 // maphash of the key with the Keyed's seed
	key  string
	_    [keyEntryPad]byte
	// state is the Keyed's own written state for the key, on the line of
	// the Bucket's lock, just before it.
	state keyState
	Bucket
}

// keyEntryPad makes a keyEntry 256 bytes, with the Bucket at its end, after
// the hash (8), the key (16) and the key's state (16; TestKeyEntrySize). A
// Bucket grown past its 176 bytes moves the state onto the first line
// (TestKeyEntryEdgeLinesAreReadOnly fails), and one past 216 makes the pad
// negative, which does not compile: move what only some buckets use behind
// a pointer (as the window's ext, the queue and the holds are) instead.
const keyEntryPad = 256 - 8 - 16 - unsafe.Sizeof(keyState{}) - unsafe.Sizeof(Bucket{})

var _ tally = (*keyEntry)(nil)

// keyState is what a Keyed limiter keeps for a key beside its bucket, and
// writes on the key's calls. Guarded by the bucket's lock.
type keyState struct {
	// stripe is where the key counts its admissions: the stripe of the
	// processor that last refreshed it (see Keyed.with), so that the hot
	// path skips the lookup stripes.local makes. nil until the key's first
	// call ends.
	stripe *stripe
	// calls counts the calls made on the key (it paces the ring's padding,
	// the stripe's refresh and sweeps).
	calls uint32
	// dead says the key was forgotten (no longer in its table),
	// ringPadded that its ring was given guard lines (padRingLocked), and
	// tiered that it has limits of its own (WithKeyLimits), which
	// Keyed.SetLimit leaves alone.
	dead, ringPadded, tiered bool
}

// admit counts an admission in the key's stripe, or, before the key's first
// call has ended, in the calling processor's.
func (e *keyEntry) admit(wait time.Duration) {
	if s := e.state.stripe; s != nil {
		s.admit(wait)
	} else {
		e.hooks.agg.admit(wait)
	}
}

// unadmit turns an admission into a cancellation, in the shard.
func (e *keyEntry) unadmit() {
	e.hooks.agg.admitted.Add(^uint64(0))
	e.hooks.agg.cancelled.Add(1)
}

func (e *keyEntry) cancel()                       { e.hooks.agg.cancelled.Add(1) }
func (e *keyEntry) refuse()                       { e.hooks.agg.refused.Add(1) }
func (e *keyEntry) queued(delta int64, edge bool) { e.hooks.agg.queued(delta, edge) }
func (e *keyEntry) eventKey() string              { return e.key }

// lockLive locks e, found without the shard's lock, and reports whether
// it is still in the table; if it was forgotten in between, it unlocks it
// and returns false, and the caller must look again.
func (e *keyEntry) lockLive() bool {
	e.mu.Lock()
	if e.state.dead {
		e.mu.Unlock()
		return false
	}
	return true
}

// idleLocked reports whether the key's bucket is indistinguishable from a
// new one at now, so that the Keyed limiter may forget the key. Requires
// e.mu.
func (e *keyEntry) idleLocked(now int64) bool {
	e.expireHoldsLocked(now)
	return e.waitingLocked() == 0 && e.heldLocked() == 0 && e.win.idleAt() <= now
}

// takeCallsLocked hands the hook calls queued on the key's bucket to the
// Keyed limiter, which releases the bucket's lock under a shard's lock of
// its own and makes them after both (runHooks). Requires e.mu.
func (e *keyEntry) takeCallsLocked() []hookCall { return e.calls.Take() }

// padRingLocked moves the key's ring of emission times, after the window
// has grown it, into whole cache lines with a guard line before and after
// them (an allocation of whole lines, which Go's allocator aligns to a
// line): the ring is written on every admission, and without the guards
// it would share a line with other keys' rings, which other cores write,
// or be next to one, which their prefetchers fetch with it (see keyEntry).
// The window only uses the ring's length, so the spare capacity changes
// nothing else. It runs every padEvery calls, so a key used once keeps its
// small ring; a ring the window grew again since is padded again. Requires
// e.mu.
func (e *keyEntry) padRingLocked() {
	const line = cacheLine / 8 // int64s in a cache line
	r := e.win.ring
	c := (len(r) + line - 1) &^ (line - 1)
	if c == 0 || e.state.ringPadded && cap(r) == c {
		return
	}
	p := make([]int64, c+2*line)[line : line+len(r) : line+c]
	copy(p, r)
	e.win.ring = p
	e.state.ringPadded = true
}

// cacheLine is the size of a cache line on the processors Go runs on most.
const cacheLine = 64
