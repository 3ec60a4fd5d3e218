package guard

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// sweepPerHit is how many expired keys other than its own a Hit evicts. Each
// Hit adds at most one key, so evicting more than one keeps the backlog of
// expired keys shrinking while bounding the work of any single Hit.
const sweepPerHit = 4

// MemoryStore is the in-process Store that a Guard uses by default. It keeps
// one small entry per live key, holds a single mutex for the whole of each
// Hit, and is safe for concurrent use.
//
// Memory is bounded without a goroutine: entries sit in a min-heap ordered by
// the instant their state ends (window end or block end). Each Hit first
// evicts up to a few entries whose end has passed, so expired keys are freed
// as fast as new ones can arrive; Keys, and a Hit that would exceed the
// maximum number of keys, evict every expired entry. A store that sees no
// calls keeps its memory until the next one.
//
// With a maximum (NewMemoryStore(max) with max > 0), a Hit for a new key
// while max keys are live fails with an error wrapping
// rxthrottle.ErrTooManyKeys (the error a bounded rxthrottle.Keyed returns
// for the same reason; test for it with errors.Is), and its Result's Reset
// is the time until the soonest live key ends and makes room. The store
// never forgets a live key to make room: forgetting a blocked key would
// lift its block early, and forgetting a counting key would give it a
// fresh window, so a client that makes new keys (new source addresses)
// could buy its old ones a fresh quota. A Guard turns the error into a
// refusal (see Guard.Check).
type MemoryStore struct {
	mu      sync.Mutex
	maxKeys int
	keys    map[string]*entry
	byEnd   endHeap
	blocked int // entries in the blocked state
}

// entry is one key's state; see Store for the rules.
type entry struct {
	key     string
	count   int
	end     time.Time // window end while counting, block end while blocked
	blocked bool
	index   int // position in MemoryStore.byEnd
}

var (
	_ Store      = (*MemoryStore)(nil)
	_ KeyCounter = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty MemoryStore that holds at most maxKeys live
// keys, or any number if maxKeys is 0. A negative maxKeys is an error.
func NewMemoryStore(maxKeys int) (*MemoryStore, error) {
	if maxKeys < 0 {
		return nil, fmt.Errorf("guard: NewMemoryStore(%d): the maximum number of keys must not be negative", maxKeys)
	}
	return &MemoryStore{maxKeys: maxKeys, keys: make(map[string]*entry)}, nil
}

// Hit implements Store. It never blocks and does not use ctx.
func (s *MemoryStore) Hit(_ context.Context, key string, p Policy, now time.Time) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(now, sweepPerHit)

	e := s.keys[key]
	if e != nil && !now.Before(e.end) {
		// Rule 1: at or after its end the key is fresh; reuse the entry.
		s.setBlocked(e, false)
		e.count = 0
	}
	if e == nil {
		if s.maxKeys > 0 && len(s.keys) >= s.maxKeys {
			s.evict(now, -1)
			if len(s.keys) >= s.maxKeys {
				return Result{Reset: s.byEnd[0].end.Sub(now)}, fmt.Errorf("guard: %w: key %q would be number %d of at most %d, and none has expired",
					rxthrottle.ErrTooManyKeys, key, s.maxKeys+1, s.maxKeys)
			}
		}
		e = &entry{key: key}
		s.keys[key] = e
		heap.Push(&s.byEnd, e)
	}

	switch {
	case e.blocked: // rule 5
		return Result{Count: e.count, Reset: e.end.Sub(now)}, nil
	case e.count == 0: // rule 2
		e.count = 1
		e.end = now.Add(p.Limit.Window)
		heap.Fix(&s.byEnd, e.index)
		return Result{Allowed: true, Count: 1, Reset: p.Limit.Window}, nil
	case e.count < p.Limit.N: // rule 3
		e.count++
		return Result{Allowed: true, Count: e.count, Reset: e.end.Sub(now)}, nil
	default: // rule 4
		e.count++
		if until := now.Add(p.Block); until.After(e.end) {
			e.end = until
		}
		s.setBlocked(e, true)
		heap.Fix(&s.byEnd, e.index)
		return Result{Blocked: true, Count: e.count, Reset: e.end.Sub(now)}, nil
	}
}

// Keys implements KeyCounter: it evicts every expired entry, then counts.
func (s *MemoryStore) Keys(now time.Time) (live, blocked int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(now, -1)
	return len(s.keys), s.blocked
}

// evict removes up to n entries whose end is at or before now, or all of
// them if n < 0. It requires that s.mu is held.
func (s *MemoryStore) evict(now time.Time, n int) {
	for ; n != 0 && len(s.byEnd) > 0; n-- {
		e := s.byEnd[0]
		if now.Before(e.end) {
			return
		}
		heap.Pop(&s.byEnd)
		delete(s.keys, e.key)
		s.setBlocked(e, false)
	}
}

// setBlocked sets e.blocked and keeps s.blocked in step. It requires that
// s.mu is held.
func (s *MemoryStore) setBlocked(e *entry, b bool) {
	switch {
	case b && !e.blocked:
		s.blocked++
	case !b && e.blocked:
		s.blocked--
	}
	e.blocked = b
}

// endHeap is a container/heap of entries ordered by end, soonest first.
type endHeap []*entry

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].end.Before(h[j].end) }
func (h endHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *endHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *endHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil // let the entry be collected
	*h = old[:len(old)-1]
	e.index = -1
	return e
}
