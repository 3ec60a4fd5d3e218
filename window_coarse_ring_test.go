package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestRecordSortedCoarseAgreesWithRecord runs the same random batches of
// sorted readings (a budget's departures, as closeLocked records them)
// through two windows of coarse history: one records each batch at once
// (recordSorted, whose full ring takes replaceOldestCoarseN's batches), the
// other each reading in turn with the general path's record. Rings of 1 to
// 6 (shorter than a batch at times), grains of a window's 1 to 8th, gaps
// past the horizon (runs pruned, or all of them), replaced limits whose
// history is kept a window more, late completions inserted into the runs,
// and clocks set back: after each batch the ring, the runs (the whole
// slice, as TestWaitBudgetAgreesWithTheLock compares it) and what was
// dropped are the same.
func TestRecordSortedCoarseAgreesWithRecord(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		// N above the ring's length, as coarse history's is (a forced one
		// of a smaller N overwrites the ring's oldest, record's case).
		ringCap, runsPerW := 1+r.IntN(6), 1+r.Int64N(8)
		limit := func() []Limit {
			return []Limit{Per(ringCap+1+r.IntN(10), time.Duration(1+r.IntN(20))*time.Millisecond)}
		}
		limits := limit()
		batch, each := newWindow(limits), newWindow(limits)
		for _, w := range []*window{&batch, &each} {
			w.extended().coarse = newCoarse(w.largestW(), ringCap, runsPerW)
			w.coarse().forced = true
			w.setCoarse()
		}
		grain, horizon := batch.coarse().grain, batch.coarse().horizon
		now := int64(0)
		for step := range 150 {
			switch k := r.IntN(20); {
			case k == 0:
				now += horizon + r.Int64N(2*horizon) // past the horizon
			case k == 1:
				nl := limit()
				batch.setLimits(nl, now)
				each.setLimits(nl, now)
			case k == 2 && now > 0:
				late := now - r.Int64N(2*horizon) // into the runs, or the ring
				batch.recordAt(late)
				each.recordAt(late)
			}
			vs := make([]int64, 1+r.IntN(20))
			for i := range vs {
				switch r.IntN(8) {
				case 0:
					now -= r.Int64N(2 * grain) // set back: sorted below
				case 1:
					now += r.Int64N(horizon)
				default:
					now += r.Int64N(2 * grain)
				}
				vs[i] = now
			}
			slices.Sort(vs)
			now = vs[len(vs)-1]
			batch.recordSorted(vs)
			for _, v := range vs {
				each.record(v)
			}
			if !sameRingAndRuns(&batch, &each) {
				t.Fatalf("seed %d step %d, readings %v:\nbatch %s\neach  %s\nruns' slices:\nbatch %+v\neach  %+v",
					seed, step, vs, windowState(&batch), windowState(&each), *batch.coarse(), *each.coarse())
			}
		}
	}
}

// sameRingAndRuns reports whether a and b, windows of coarse history, have
// the same ring (from its oldest), runs (the whole slice) and dropped.
func sameRingAndRuns(a, b *window) bool {
	if a.size != b.size || a.dropped != b.dropped || !reflect.DeepEqual(a.coarse(), b.coarse()) {
		return false
	}
	for i := range a.size {
		if a.at(i) != b.at(i) {
			return false
		}
	}
	return true
}

// TestWaitBudgetCoarseRingOfN is TestWaitBudgetAgreesWithTheLock's twins
// with coarse history forced on a ring of 4 and limits whose largest N is
// 4 or less, so that a full ring holds all the limits look back to: bursts
// of Waits 3 ms apart, the budget's departures recorded by the Wait that
// next takes the lock. The twin that takes the lock for every Wait
// overwrites the ring's oldest when the ring is of the one limit's N
// (takeOneLocked's common case) or of several limits' largest
// (overwriteOldest), and puts it into the runs when larger: the budget's
// twin must do the same (it put the oldest into the runs in all three,
// which made TestWaitBudgetAgreesWithTheLock fail about once in 200 runs).
func TestWaitBudgetCoarseRingOfN(t *testing.T) {
	for _, limits := range [][]Limit{
		{Per(4, 3*time.Millisecond)},
		{Per(4, 3*time.Millisecond), Per(3, time.Millisecond)},
		{Per(3, 3*time.Millisecond)},
	} {
		synctest.Test(t, func(t *testing.T) {
			fast, locked := newBudgetTwins(t, limits, 4)
			twins := []*Bucket{fast, locked}
			start := time.Now()
			var mu sync.Mutex
			var wg sync.WaitGroup
			went := [2][]time.Duration{}
			for round := range 6 {
				for i, b := range twins {
					for range 4 {
						wg.Go(func() {
							if err := b.Wait(context.Background()); err != nil {
								t.Error(err)
							}
							mu.Lock()
							went[i] = append(went[i], time.Since(start))
							mu.Unlock()
						})
					}
				}
				time.Sleep(3 * time.Millisecond)
				synctest.Wait()
				compareTwins(t, fmt.Sprintf("limits %v, round %d", limits, round), fast, locked, &mu, &went)
			}
			wg.Wait()
		})
	}
}
