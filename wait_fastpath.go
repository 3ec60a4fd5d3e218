package rxthrottle

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Wait's lock-free path. A free Wait under the bucket's lock is a lock,
// one clock read and an unlock: two atomic read-modify-writes and the
// read, which alone leave no room under go.uber.org/ratelimit's Take (one
// compare-and-swap and two clock reads) for the admission's own work
// (BENCHMARKS.md, "Bucket.Wait without the lock"). So a bucket that
// nobody waits on, that holds no token and has tokens to spare hands out a
// budget: under the lock, Wait counts J tokens free at a reading now
// (window.free), and the next J callers of Wait take one each with one
// atomic add on a single word and no lock, then read the clock and write
// the reading down. Their departures go into the window, in order, the
// next time anyone takes the lock (bucketMu.Lock), before it decides
// anything.
//
// Why that is SPEC's schedule to the nanosecond: a token free at now stays
// free later (completions only leave the window as time passes, and
// nothing else can be recorded without the lock, which closes the budget
// first), and each of the J tokens was counted separately, so each of the
// J departures is allowed by the window as if decided under the lock at its
// own reading. Each reading is taken after its claim, the decision, and
// after the opening's reading (SPEC.md, "On the real clock"); the lock's
// next holder waits for every reading of the claims made before it closed
// the budget, records them sorted, and only then reads the clock itself.
// A claim made once the budget is spent or closed counts for nothing: the
// caller takes the lock.

// bucketMu is a Bucket's lock, and the budget Wait hands out without it.
// Lock (and TryLock) closes the budget and records the departures made
// from it, so that whatever runs under the lock sees the window and the
// counters as if every caller had taken the lock.
type bucketMu struct {
	sync.Mutex
	fast atomic.Pointer[fastWait] // nil until a Wait opens a budget
}

// Lock locks m and closes its budget, if one is open.
func (m *bucketMu) Lock() {
	m.Mutex.Lock()
	if f := m.fast.Load(); f != nil {
		f.closeLocked()
	}
}

// TryLock is sync.Mutex.TryLock, closing the budget as Lock does.
func (m *bucketMu) TryLock() bool {
	if !m.Mutex.TryLock() {
		return false
	}
	if m.fast.Load() != nil {
		m.fast.Load().closeLocked()
	}
	return true
}

// The budget word: bit 0 says a budget is open; then the claims made so
// far, j (claims beyond the budget included: they fail); the top
// fastSizeBits hold the budget's size, J.
const (
	fastSizeBits  = 12
	fastSizeShift = 64 - fastSizeBits
	fastClaimMask = 1<<(fastSizeShift-1) - 1
	// fastBudget is the most tokens one budget hands out: enough that the
	// lock taken to close and reopen it costs a free Wait under a
	// nanosecond; few enough that a bucket's buffer of readings stays 2 KiB.
	fastBudget = 256
	// fastUnclaimed marks a reading not yet written (readings are offsets
	// from the bucket's base on the monotonic clock, never this).
	fastUnclaimed = -1 << 63
)

// fastWait is a bucket's budget (see above). Its buffer and base never
// change once it is made; a bucket whose limits outgrow the buffer gets a
// new one.
type fastWait struct {
	state atomic.Uint64
	b     *Bucket
	base  time.Time // the window's base, read as the hot path reads it
	buf   []int64   // the claims' readings, fastUnclaimed until written
}

// closeLocked closes the budget and records its departures in the window
// and the counters, in claim order, as takeOneLocked would have, waiting
// for any claim still writing its reading. Requires b.mu.
func (f *fastWait) closeLocked() {
	if f.state.Load()&1 == 0 {
		return // closed already: no read-modify-write
	}
	s := f.state.Swap(0)
	n := int(min(s>>1&fastClaimMask, s>>fastSizeShift))
	if s&1 == 0 || n == 0 {
		return
	}
	got := f.buf[:n]
	// Claims read the clock after claiming, so a later claim may hold an
	// earlier reading.
	if !awaitReadings(got) {
		slices.Sort(got)
	}
	b := f.b
	b.win.recordSorted(got)
	b.win.depart(got[n-1])
	b.tally.(*bucketCounts).Admitted += uint64(n)
	copy(got, fastUnclaimedBuf[:]) // no claim can write until the next opening
}

// fastUnclaimedBuf is a budget's buffer of readings none of which is
// written, copied over the readings a closing has recorded.
var fastUnclaimedBuf = func() (buf [fastBudget]int64) {
	for i := range buf {
		buf[i] = fastUnclaimed
	}
	return buf
}()

// awaitReadings waits until every reading of got is written (claimed, a
// reading is about to be), and reports whether they are in order.
func awaitReadings(got []int64) bool {
	for {
		n, sorted := readingsWritten(got)
		if n == len(got) {
			return sorted
		}
		runtime.Gosched()
	}
}

// readingsWritten returns how many readings of got are written before the
// first that is not, and whether those are in order. (A loop without a
// call, which the compiler keeps in registers.)
func readingsWritten(got []int64) (int, bool) {
	sorted, prev := true, int64(fastUnclaimed) // below every reading
	for i := range got {
		v := atomic.LoadInt64(&got[i])
		if v == fastUnclaimed {
			return i, sorted
		}
		if v < prev {
			sorted = false
		}
		prev = v
	}
	return len(got), sorted
}

// openFastLocked opens a budget after a free Wait at now, if the bucket is
// as takeOneLocked's Stats-only case needs it (real clock, its own
// counters, no hook, no spacing, nobody waiting, no token held) and at
// least two tokens are free at now. Requires b.mu, with the budget closed.
func (b *Bucket) openFastLocked(now int64) {
	w := &b.win
	if !b.hooks.realClock || b.hooks.onAdmit != nil || !b.calls.None() || w.spacing > 0 ||
		b.front.Waiting() > 0 || b.heldLocked() > 0 {
		return
	}
	if _, ok := b.tally.(*bucketCounts); !ok {
		return
	}
	free := w.free(now, 0)
	if free < 2 {
		return
	}
	f := b.mu.fast.Load()
	if want := min(w.smallestN(), fastBudget); f == nil || len(f.buf) < want {
		f = &fastWait{b: b, base: b.hooks.base, buf: make([]int64, want)}
		for i := range f.buf {
			f.buf[i] = fastUnclaimed
		}
		b.mu.fast.Store(f)
	}
	f.state.Store(uint64(min(free, len(f.buf)))<<fastSizeShift | 1)
}
