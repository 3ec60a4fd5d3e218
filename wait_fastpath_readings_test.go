package rxthrottle

import (
	"sync/atomic"
	"testing"
)

// TestReadingsWritten checks closeLocked's scan of a budget's readings: how
// many are written before the first that is not, and whether those are in
// order (claims read the clock after claiming, so a later claim may hold
// an earlier reading).
func TestReadingsWritten(t *testing.T) {
	u := int64(fastUnclaimed)
	for i, c := range []struct {
		got    []int64
		n      int
		sorted bool
	}{
		{[]int64{}, 0, true},
		{[]int64{u}, 0, true},
		{[]int64{0}, 1, true},
		{[]int64{5, 5, 7}, 3, true},
		{[]int64{5, 4, 7}, 3, false},
		{[]int64{5, 7, u, 3}, 2, true}, // what follows the first unwritten is not looked at
		{[]int64{7, 5, u}, 2, false},
		{[]int64{1, 2, 3, 2}, 4, false},
	} {
		n, sorted := readingsWritten(c.got)
		if n != c.n || sorted != c.sorted {
			t.Errorf("step %d: readingsWritten(%v) = %d, %v, want %d, %v", i, c.got, n, sorted, c.n, c.sorted)
		}
	}
}

// TestAwaitReadings checks that closeLocked waits for a reading claimed but
// not yet written: awaitReadings returns only once the other goroutine has
// written it, and then says whether the readings are in order.
func TestAwaitReadings(t *testing.T) {
	for _, last := range []int64{9, 1} {
		got := []int64{2, 3, fastUnclaimed}
		var written atomic.Bool
		go func() {
			written.Store(true)
			atomic.StoreInt64(&got[2], last)
		}()
		sorted := awaitReadings(got)
		if !written.Load() || atomic.LoadInt64(&got[2]) != last {
			t.Fatalf("awaitReadings returned before the reading %d was written", last)
		}
		if sorted != (last >= 3) {
			t.Errorf("awaitReadings(2, 3, %d) = %v", last, sorted)
		}
	}
}
