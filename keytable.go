package rxthrottle

import "sync/atomic"

// keyTable is one shard's index of its keys: an open-addressing hash table
// with linear probing whose lookups take no lock and write nothing, so
// callers of different keys on different cores share no written memory.
// Only the shard's writers change it, under the shard's lock.
//
// A reader can see the table in the middle of a change (an entry being
// moved or removed, or a table already replaced by a larger one). It can
// then miss a key that is there, or find one that was just forgotten, but
// never take one key for another: it checks the entry's own hash and key.
// Both outcomes are safe, because a reader confirms what it found under the
// entry's lock (a forgotten entry is marked dead) and looks up again under
// the shard's lock what it did not find.
//
// Each slot costs 12 bytes: a 32-bit tag (high bits of the hash, 0 for an
// empty slot), scanned without touching any entry, and the entry pointer.
// The table doubles beyond 3/4 full and halves below 1/8, so it costs 16 to
// 96 bytes per key, and about 25 at a million keys.
type keyTable struct {
	tags    []atomic.Uint32
	entries []atomic.Pointer[keyEntry]
	mask    uint64
	count   int // entries; changed under the shard's lock
}

// minTableSize is the slot count of a new table; it never shrinks below.
const minTableSize = 8

func newKeyTable(size int) *keyTable {
	return &keyTable{
		tags:    make([]atomic.Uint32, size),
		entries: make([]atomic.Pointer[keyEntry], size),
		mask:    uint64(size - 1),
	}
}

// tagOf is the tag of a hash: its high half, never 0. The shard and the
// home slot come from the low bits, so the tag tells apart the keys they
// put side by side.
func tagOf(h uint64) uint32 { return uint32(h>>32) | 1 }

// home is the slot where h's probe starts.
func (t *keyTable) home(h uint64) uint64 { return (h / keyedShards) & t.mask }

// find returns the entry of key (whose hash is h) or nil. It takes no lock
// and writes nothing; see keyTable for what a concurrent change may do.
func (t *keyTable) find(h uint64, key string) *keyEntry {
	tag := tagOf(h)
	i := t.home(h)
	for range t.tags {
		switch t.tags[i].Load() {
		case 0:
			return nil
		case tag:
			if e := t.entries[i].Load(); e != nil && e.hash == h && e.key == key {
				return e
			}
		}
		i = (i + 1) & t.mask
	}
	return nil
}

// put adds e, which must not be in t. There must be a free slot.
// Requires the shard's lock.
func (t *keyTable) put(e *keyEntry) {
	i := t.home(e.hash)
	for t.tags[i].Load() != 0 {
		i = (i + 1) & t.mask
	}
	t.set(i, e)
	t.count++
}

// set fills slot i: the entry first, then the tag that makes it visible.
func (t *keyTable) set(i uint64, e *keyEntry) {
	t.entries[i].Store(e)
	t.tags[i].Store(tagOf(e.hash))
}

// removeAt empties slot i and moves back the entries after it that probed
// past it (backward-shift deletion), so no tombstone is ever left and
// lookups stay short. An entry is written into its new slot before its old
// one is emptied. Requires the shard's lock.
func (t *keyTable) removeAt(i uint64) {
	t.count--
	for j := i; ; {
		j = (j + 1) & t.mask
		if t.tags[j].Load() == 0 {
			break
		}
		e := t.entries[j].Load()
		// e may fill the hole at i unless its home lies cyclically in
		// (i, j]: then it would sit before its home.
		if h := t.home(e.hash); (j-h)&t.mask >= (j-i)&t.mask {
			t.set(i, e)
			i = j
		}
	}
	t.tags[i].Store(0)
	t.entries[i].Store(nil)
}

// resized returns a copy of t with size slots (a power of two that holds
// t's entries), or t itself if its size suits its count: doubled beyond 3/4
// full with one more entry, halved below 1/8.
func (t *keyTable) resized(more int) *keyTable {
	n, size := t.count+more, len(t.tags)
	switch {
	case 4*n > 3*size:
		size *= 2
	case 8*n < size && size > minTableSize:
		size /= 2
	default:
		return t
	}
	u := newKeyTable(size)
	for i := range t.entries {
		if e := t.entries[i].Load(); e != nil {
			u.put(e)
		}
	}
	return u
}
