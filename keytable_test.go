package rxthrottle

import (
	"context"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEntry makes an entry for key with a hash drawn from few values, so
// that keys collide on home slots and tags alike.
func testEntry(r *rand.Rand, key string) *keyEntry {
	e := &keyEntry{hash: r.Uint64N(1<<12) | r.Uint64N(4)<<40}
	e.key = key
	return e
}

// checkTable verifies that every entry is reachable from its home slot
// without crossing an empty one, that tags match, and the count.
func checkTable(t *testing.T, tb *keyTable, want map[string]*keyEntry) {
	t.Helper()
	n := 0
	for i := range tb.entries {
		e := tb.entries[i].Load()
		if e == nil {
			require.Zero(t, tb.tags[i].Load(), "slot %d: a tag without an entry", i)
			continue
		}
		n++
		if tb.tags[i].Load() != tagOf(e.hash) {
			t.Fatalf("slot %d: tag %x, want %x", i, tb.tags[i].Load(), tagOf(e.hash))
		}
		for j := tb.home(e.hash); j != uint64(i); j = (j + 1) & tb.mask {
			if tb.entries[j].Load() == nil {
				t.Fatalf("slot %d: %q is cut off from its home %d", i, e.key, tb.home(e.hash))
			}
		}
	}
	require.Equal(t, len(want), n)
	require.Equal(t, len(want), tb.count)
	for key, e := range want {
		if tb.find(e.hash, key) != e {
			t.Fatalf("key %q not found", key)
		}
	}
}

// TestKeyTableAgainstMap makes and removes keys at random, as the shard
// does (growing and shrinking the table), and checks the table against a
// map as it goes.
func TestKeyTableAgainstMap(t *testing.T) {
	for seed := range 10 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		tb := newKeyTable(minTableSize)
		want := map[string]*keyEntry{}
		for step := 0; step < 1000 || len(want) > 0; step++ {
			// Grow to about 200 keys, then shrink back to none.
			if len(want) == 0 && step < 1000 || (step < 500) == (r.IntN(10) < 7) {
				key := fmt.Sprint("k", step)
				e := testEntry(r, key)
				tb = tb.resized(1)
				tb.put(e)
				want[key] = e
			} else {
				var victim *keyEntry
				for _, e := range want {
					victim = e
					break
				}
				i := tb.home(victim.hash)
				for tb.entries[i].Load() != victim {
					i = (i + 1) & tb.mask
				}
				tb.removeAt(i)
				delete(want, victim.key)
				tb = tb.resized(0)
				require.Nil(t, tb.find(victim.hash, victim.key))
			}
			if step%16 == 0 || len(want) < 16 {
				checkTable(t, tb, want)
			}
		}
		require.Equal(t, minTableSize, len(tb.tags), "seed %d: the table shrinks back", seed)
	}
}

// TestKeyTableConcurrentFind reads the table while a writer adds and
// removes keys: a lookup may miss a key that is moving, but never returns
// another key's entry, and keys that are never removed are still there.
func TestKeyTableConcurrentFind(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var table atomic.Pointer[keyTable]
	table.Store(newKeyTable(minTableSize))
	stable := make([]*keyEntry, 20)
	for i := range stable {
		stable[i] = testEntry(r, fmt.Sprint("stable-", i))
		tb := table.Load().resized(1)
		tb.put(stable[i])
		table.Store(tb)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var found atomic.Int64
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				want := stable[(i+g)%len(stable)]
				if e := table.Load().find(want.hash, want.key); e != nil {
					if !assert.Same(t, want, e) {
						return
					}
					found.Add(1)
				}
				if e := table.Load().find(want.hash, "no such key"); !assert.Nil(t, e) {
					return
				}
			}
		})
	}
	var churn []*keyEntry
	// Churn until the readers have done some work, however busy the
	// machine is.
	for step := 0; step < 5000 || found.Load() < 1000 && !t.Failed(); step++ {
		if step >= 5000 {
			runtime.Gosched()
		}
		tb := table.Load()
		if len(churn) < 200 && (len(churn) == 0 || r.IntN(2) == 0) {
			e := testEntry(r, fmt.Sprint("churn-", step))
			if u := tb.resized(1); u != tb {
				tb = u
				table.Store(tb)
			}
			tb.put(e)
			churn = append(churn, e)
			continue
		}
		j := r.IntN(len(churn))
		e := churn[j]
		churn[j] = churn[len(churn)-1]
		churn = churn[:len(churn)-1]
		i := tb.home(e.hash)
		for tb.entries[i].Load() != e {
			i = (i + 1) & tb.mask
		}
		tb.removeAt(i)
		if u := tb.resized(0); u != tb {
			table.Store(u)
		}
	}
	stop.Store(true)
	wg.Wait()
	for _, e := range stable {
		require.Same(t, e, table.Load().find(e.hash, e.key))
	}
}

// TestKeyEntrySize: a key's entry is a whole number of pairs of cache
// lines, so no two entries share a line or a pair, and no more than two
// pairs, so an idle key stays within its memory budget. When Bucket grows
// past keyEntry's 256 bytes, move what only some keys use behind a pointer
// (as waits and holds are) rather than let every key pay for it.
func TestKeyEntrySize(t *testing.T) {
	size := unsafe.Sizeof(keyEntry{})
	require.Zero(t, size%cacheLinePad, "keyEntry is %d bytes", size)
	require.LessOrEqual(t, size, uintptr(256), "keyEntry is %d bytes", size)
}

// TestKeyRingIsPadded: a busy key's ring is moved into whole cache lines,
// with a guard line on each side, and keeps its contents.
func TestKeyRingIsPadded(t *testing.T) {
	k, err := NewKeyed(Per(20, time.Nanosecond), WithIdleMargin(time.Hour))
	require.NoError(t, err)
	for range padEvery {
		require.NoError(t, k.Wait(context.Background(), "a"))
	}
	e, _, err := k.entry("a", maphash.String(k.seed, "a"), true)
	require.NoError(t, err)
	defer e.mu.Unlock()
	r := e.win.ring
	require.True(t, e.state.ringPadded)
	require.Len(t, r, 20)
	require.Equal(t, 24, cap(r), "20 entries take 3 lines")
	require.Zero(t, uintptr(unsafe.Pointer(&r[0]))%cacheLine, "the ring starts a line")
	before := unsafe.Slice((*int64)(unsafe.Add(unsafe.Pointer(&r[0]), -cacheLine)), cacheLine/8+cap(r)+cacheLine/8)
	require.Equal(t, make([]int64, cacheLine/8), before[:cacheLine/8], "the guard line before it is unused")
	e.padRingLocked()
	require.Equal(t, &r[0], &e.win.ring[0], "a padded ring is not padded again")
}

// TestKeyEntryEdgeLinesAreReadOnly: the fields a call on a live key writes
// are in the middle lines of its entry, so the first and last lines, which
// a neighbouring entry's core may prefetch, are only ever read; and they
// share one line, so that three lines nobody writes lie between two
// entries' written lines (BENCHMARKS.md, "Keyed"). The key's written state
// (keyState) is checked whole, its first byte to its last, so a field
// added to it is checked too.
func TestKeyEntryEdgeLinesAreReadOnly(t *testing.T) {
	e := new(keyEntry)
	// Offsets are taken from pointers to one heap object, each against
	// the entry's own address at the time (a stack can move).
	offset := func(p unsafe.Pointer) uintptr { return uintptr(p) - uintptr(unsafe.Pointer(e)) }
	type span struct {
		p    unsafe.Pointer
		size uintptr
	}
	written := map[string]span{
		"mu":                {unsafe.Pointer(&e.mu), unsafe.Sizeof(e.mu)},
		"state":             {unsafe.Pointer(&e.state), unsafe.Sizeof(e.state)},
		"win.head":          {unsafe.Pointer(&e.win.head), unsafe.Sizeof(e.win.head)},
		"win.size":          {unsafe.Pointer(&e.win.size), unsafe.Sizeof(e.win.size)},
		"win.dropped":       {unsafe.Pointer(&e.win.dropped), unsafe.Sizeof(e.win.dropped)},
		"win.lastDeparture": {unsafe.Pointer(&e.win.lastDeparture), unsafe.Sizeof(e.win.lastDeparture)},
	}
	size := unsafe.Sizeof(*e)
	lines := map[uintptr][]string{} // the written lines, and what is on them
	for name, f := range written {
		off := offset(f.p)
		assert.True(t, off >= cacheLine && off+f.size <= size-cacheLine,
			"%s is at offsets %d-%d of %d: on an edge line", name, off, off+f.size-1, size)
		for l := off / cacheLine; l <= (off+f.size-1)/cacheLine; l++ {
			lines[l] = append(lines[l], name)
		}
	}
	assert.Len(t, lines, 1, "a call writes more than one line of its entry: %v", lines)
}

// TestKeyUsedOnceKeepsItsSmallRing: padding a ring is for busy keys; a key
// used once keeps its one-entry ring, which is what an idle key costs.
func TestKeyUsedOnceKeepsItsSmallRing(t *testing.T) {
	k, err := NewKeyed(Per(20, time.Hour))
	require.NoError(t, err)
	require.NoError(t, k.Wait(context.Background(), "a"))
	e, _, err := k.entry("a", maphash.String(k.seed, "a"), true)
	require.NoError(t, err)
	defer e.mu.Unlock()
	require.Less(t, cap(e.win.ring), cacheLinePad/8, "ring capacity %d", cap(e.win.ring))
}
