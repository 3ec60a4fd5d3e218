package rxthrottle

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
)

// The twins of the budget's tests (TestWaitBudgetAgreesWithTheLock,
// TestWaitBudgetCoarseRingOfN, and token_twins_test.go's): a bucket whose
// free Waits go through budgets and one that takes the lock for every
// Wait (notRealClock).

// twinCases runs drive on 40 cases, each in a synctest bubble of its own
// with a generator of its own, seeded anew each run; the seed and the case
// name every failure.
func twinCases(t *testing.T, drive func(t *testing.T, r *rand.Rand, name string)) {
	seed := uint64(time.Now().UnixNano())
	for c := range 40 {
		r := rand.New(rand.NewPCG(seed, uint64(c)))
		synctest.Test(t, func(t *testing.T) {
			drive(t, r, fmt.Sprintf("seed %d, case %d", seed, c))
		})
	}
}

// compareTwins checks that the twins' windows, counters and departures
// (sorted: goroutines of one instant go in any order) are the same.
func compareTwins(t *testing.T, where string, fast, locked *Bucket, mu *sync.Mutex, went *[2][]time.Duration) {
	t.Helper()
	fast.mu.Lock()
	f, fs, fc := snapshot(fast), fast.statsLocked(fast.now()), cloneCoarse(fast.win.coarse())
	fast.mu.Unlock()
	locked.mu.Lock()
	l, ls, lc := snapshot(locked), locked.statsLocked(locked.now()), cloneCoarse(locked.win.coarse())
	locked.mu.Unlock()
	if !f.equal(l) {
		t.Fatalf("%s: the windows differ:\nbudget %+v\nlocked %+v", where, f, l)
	}
	if !reflect.DeepEqual(fc, lc) {
		t.Fatalf("%s: the coarse histories differ:\nbudget %+v\nlocked %+v", where, fc, lc)
	}
	if fs != ls {
		t.Fatalf("%s: Stats differ:\nbudget %+v\nlocked %+v", where, fs, ls)
	}
	mu.Lock()
	defer mu.Unlock()
	a, b := slices.Sorted(slices.Values(went[0])), slices.Sorted(slices.Values(went[1]))
	if !slices.Equal(a, b) {
		t.Fatalf("%s: departures differ:\nbudget %v\nlocked %v", where, a, b)
	}
}

// newBudgetTwins returns two buckets of limits: one that reads the real
// clock, so that its free Waits go through budgets, and one that reads it
// through the clock interface and takes the lock for every Wait; both with
// coarse history forced on a ring of ringCap if ringCap > 0.
func newBudgetTwins(t *testing.T, limits []Limit, ringCap int) (fast, locked *Bucket) {
	t.Helper()
	fast, err := NewBucket(limits[0], withLimits(limits[1:])...)
	if err != nil {
		t.Fatal(err)
	}
	locked, err = NewBucket(limits[0], withLimits(limits[1:], WithClock(notRealClock{clock.New()}))...)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Bucket{fast, locked} {
		if ringCap > 0 {
			b.mu.Lock()
			forceCoarse(&b.win, ringCap)
			b.mu.Unlock()
		}
	}
	return fast, locked
}

func cloneCoarse(c *coarseHistory) *coarseHistory {
	if c == nil {
		return nil
	}
	return c.clone()
}

func minN(limits []Limit) int {
	n := limits[0].N
	for _, l := range limits {
		n = min(n, l.N)
	}
	return n
}
