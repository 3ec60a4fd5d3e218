package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
)

// TestHoldsAgreeWithTheLock is TestWaitBudgetAgreesWithTheLock for held
// tokens: two buckets of the same random limits and options (a hold
// timeout, a concurrency cap, or neither), one on the real clock (its free
// Waits take budgets, wait_fastpath.go, and Acquire and Release take their
// hot paths), the other reading it through the clock interface (no
// budget), driven through the same random steps on virtual time: groups of
// holders that acquire at one instant and, after the same work (none, or a
// sleep), release (twice: the second a no-op), cancel, release through
// ReleaseN or leave the hold to time out; bursts of Waits; a caller of two
// tokens that queues the others behind it; time moving on. Every Acquire
// and Wait returns at the same instant on both, and the windows, the
// counters and Stats (held, released, total hold) are the same after each
// step. A lock-free path for Acquire or Release has to keep it green.
func TestHoldsAgreeWithTheLock(t *testing.T) {
	twinCases(t, holdTwins)
}

func holdTwins(t *testing.T, r *rand.Rand, name string) {
	ms := time.Millisecond
	limits := []Limit{Per(1+r.IntN(30), time.Duration(1+r.IntN(20))*ms)}
	if r.IntN(3) == 0 {
		limits = append(limits, Per(1+r.IntN(60), time.Duration(1+r.IntN(60))*ms))
	}
	var opts []Option
	switch r.IntN(4) {
	case 0:
		opts = append(opts, WithHoldTimeout(time.Duration(1+r.IntN(5))*ms))
		name += ", a hold timeout"
	case 1:
		opts = append(opts, WithConcurrency(1+r.IntN(8)))
		name += ", a concurrency cap"
	}
	fast, err := NewBucket(limits[0], withLimits(limits[1:], opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	locked, err := NewBucket(limits[0], withLimits(limits[1:], append(opts, WithClock(notRealClock{clock.New()}))...)...)
	if err != nil {
		t.Fatal(err)
	}
	twins := []*Bucket{fast, locked}
	start := time.Now()
	var mu sync.Mutex
	went := [2][]time.Duration{}
	note := func(i int, at time.Duration) {
		mu.Lock()
		went[i] = append(went[i], at)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for step := range 60 {
		where := fmt.Sprintf("%s (limits %v) step %d", name, limits, step)
		switch k := r.IntN(10); {
		case k < 2:
			time.Sleep(time.Duration(r.Int64N(int64(3*ms) + 1)))
		case k == 2 && minN(limits) >= 2:
			for i, b := range twins {
				wg.Go(func() {
					if err := b.WaitN(context.Background(), 2); err != nil {
						t.Error(err)
					}
					note(i, time.Since(start))
				})
			}
		case k == 3:
			n := 1 + r.IntN(6)
			for i, b := range twins {
				for range n {
					wg.Go(func() {
						if err := b.Wait(context.Background()); err != nil {
							t.Error(err)
						}
						note(i, time.Since(start))
					})
				}
			}
		default:
			holdBurst(r, twins, start, note, &wg, t)
		}
		synctest.Wait()
		if r.IntN(3) == 0 {
			compareTwins(t, where, fast, locked, &mu, &went)
		}
	}
	wg.Wait()
	compareTwins(t, name+" at the end", fast, locked, &mu, &went)
}

// holdBurst starts the same groups of holders on both twins, one group
// after the other has run as far as it can: the holders of a group acquire
// at one instant, and after the same work (none, or a sleep) each of them
// releases, cancels, reports its usage or forgets its token, so that which
// of them goes first makes no difference.
func holdBurst(r *rand.Rand, twins []*Bucket, start time.Time, note func(int, time.Duration), wg *sync.WaitGroup, t *testing.T) {
	for range 1 + r.IntN(3) {
		n, work, end := 1+r.IntN(8), time.Duration(0), r.IntN(10)
		if r.IntN(2) == 0 {
			work = time.Duration(r.Int64N(int64(3 * time.Millisecond)))
		}
		for i, b := range twins {
			for range n {
				wg.Go(func() { holdOne(t, b, work, end, func() { note(i, time.Since(start)) }) })
			}
		}
		synctest.Wait()
	}
}

// holdOne acquires a token of b, notes it, works for work and ends the hold
// as end says.
func holdOne(t *testing.T, b *Bucket, work time.Duration, end int, note func()) {
	tok, err := b.Acquire(context.Background())
	if err != nil {
		t.Error(err)
		return
	}
	note()
	if work > 0 {
		time.Sleep(work)
	}
	switch end {
	case 0:
		tok.Cancel()
	case 1:
		if err := tok.ReleaseN(1); err != nil { // through the lock (a debt, ReleaseN(2), would race with the callers going at that instant)
			if !errors.Is(err, ErrTokenEnded) { // timed out: the same on both twins
				t.Error(err)
			}
		}
	case 2: // forgotten: the hold timeout ends it
	default:
		tok.Release()
		tok.Release() // a no-op
	}
}
