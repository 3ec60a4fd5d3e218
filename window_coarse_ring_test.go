package rxthrottle

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
)

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
			fast, err := NewBucket(limits[0], withLimits(limits[1:])...)
			if err != nil {
				t.Fatal(err)
			}
			locked, err := NewBucket(limits[0], withLimits(limits[1:], WithClock(notRealClock{clock.New()}))...)
			if err != nil {
				t.Fatal(err)
			}
			twins := []*Bucket{fast, locked}
			for _, b := range twins {
				b.mu.Lock()
				forceCoarse(&b.win, 4)
				b.mu.Unlock()
			}
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
