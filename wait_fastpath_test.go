package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
)

// notRealClock is the real clock under another type, so that a bucket
// reads it through the interface and never opens a budget: the twin that
// takes the lock for every Wait.
type notRealClock struct{ clock.Clock }

// TestWaitBudgetAgreesWithTheLock drives two buckets of the same random
// limits through the same random steps on virtual time: bursts of Waits
// from several goroutines at one instant, time moving on, and the calls
// that take the lock (Stats, Allow, Acquire and Release, Pause, SetLimit,
// WaitN). One reads the real clock, so its free Waits go through budgets
// (wait_fastpath.go); the other reads it through the clock interface and
// takes the lock for every Wait. Each Wait returns at the same instant on
// both, and after each step the two windows and counters are the same.
func TestWaitBudgetAgreesWithTheLock(t *testing.T) {
	twinCases(t, budgetTwins)
}

func budgetTwins(t *testing.T, r *rand.Rand, name string) {
	ctx := context.Background()
	ms := time.Millisecond
	limits := []Limit{Per(1+r.IntN(40), time.Duration(1+r.IntN(20))*ms)}
	if r.IntN(3) == 0 {
		limits = append(limits, Per(1+r.IntN(80), time.Duration(1+r.IntN(60))*ms))
	}
	ringCap := 0
	if r.IntN(3) == 0 { // coarse history with a small ring: its paths, at small limits
		ringCap = 1 + r.IntN(4)
		name += fmt.Sprintf(", coarse history with a ring of %d", ringCap)
	}
	fast, locked := newBudgetTwins(t, limits, ringCap)
	twins := []*Bucket{fast, locked}
	start := time.Now()
	var mu sync.Mutex
	went := [2][]time.Duration{}
	var wg sync.WaitGroup
	for step := range 60 {
		where := fmt.Sprintf("%s (limits %v) step %d", name, limits, step)
		switch k := r.IntN(12); {
		case k < 3:
			time.Sleep(time.Duration(r.Int64N(int64(3*ms) + 1)))
		case k == 3:
			until := time.Now().Add(time.Duration(r.Int64N(int64(2 * ms))))
			for _, b := range twins {
				b.Pause(until)
			}
		case k == 4 && r.IntN(3) == 0:
			nl := Per(1+r.IntN(40), time.Duration(1+r.IntN(20))*ms)
			for _, b := range twins {
				if err := b.SetLimit(nl); err != nil {
					t.Fatal(err)
				}
			}
			limits = []Limit{nl}
		case k == 5:
			for i, b := range twins {
				ok, err := b.Allow(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					mu.Lock()
					went[i] = append(went[i], time.Since(start))
					mu.Unlock()
				}
			}
		case k == 6:
			work := time.Duration(r.Int64N(int64(2 * ms)))
			for _, b := range twins {
				wg.Go(func() {
					tok, err := b.Acquire(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					time.Sleep(work)
					tok.Release()
				})
			}
		case k == 7 && minN(limits) >= 2:
			// One caller of two tokens: Waits after it queue behind it.
			for i, b := range twins {
				wg.Go(func() {
					// A SetLimit to N = 1 refuses it (ErrInvalidCost):
					// noted as the instant, negative, minus one.
					err := b.WaitN(ctx, 2)
					at := time.Since(start)
					if err != nil {
						at = -at - 1
					}
					mu.Lock()
					went[i] = append(went[i], at)
					mu.Unlock()
				})
			}
		default:
			// A burst of Waits at one instant, in any order.
			n := 1 + r.IntN(12)
			for i, b := range twins {
				for range n {
					wg.Go(func() {
						if err := b.Wait(ctx); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						went[i] = append(went[i], time.Since(start))
						mu.Unlock()
					})
				}
			}
		}
		synctest.Wait()
		if r.IntN(3) == 0 {
			compareTwins(t, where, fast, locked, &mu, &went)
		}
	}
	wg.Wait()
	compareTwins(t, name+" at the end", fast, locked, &mu, &went)
}

// TestWaitBudgetTakesNoLock checks that a free Wait takes a token of an
// open budget without the bucket's lock, and that the departure is in the
// window and the counters once the lock is taken.
func TestWaitBudgetTakesNoLock(t *testing.T) {
	ctx := context.Background()
	b, err := NewBucket(Per(10, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := b.Wait(ctx); err != nil { // the first opens a budget of 9
			t.Fatal(err)
		}
	}
	b.mu.Mutex.Lock() // held, the budget left open
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a free Wait blocked on the bucket's lock with a budget open")
	}
	b.mu.Mutex.Unlock()
	st := b.Stats()
	if st.Admitted != 4 || st.Free != 6 {
		t.Errorf("Stats after 4 Waits: Admitted %d, Free %d, want 4 and 6", st.Admitted, st.Free)
	}
	b.mu.Lock()
	size := b.win.size
	b.mu.Unlock()
	if size != 4 {
		t.Errorf("the window remembers %d departures, want 4", size)
	}
}

// TestWaitBudgetRealClockStress runs on the real clock: goroutines call
// Wait and Allow on Per(50, 2ms) while another takes the lock in a loop
// (which closes each budget, sometimes while callers are claiming from
// it) and copies the window's completions, indexed by the admissions so
// far. However the scheduler interleaves them, the history pieced together
// from those copies never holds 51 completions within 2ms, its completions
// are in order, and every admission is counted.
func TestWaitBudgetRealClockStress(t *testing.T) {
	if testing.Short() {
		t.Skip("real-clock stress test")
	}
	const n, w = 50, 2 * time.Millisecond
	b, err := NewBucket(Per(n, w))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	history := map[uint64]int64{} // admission index -> completion
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			b.mu.Lock()
			admitted := b.ownCounts().Admitted
			for i := range b.win.size {
				history[admitted-uint64(b.win.size)+uint64(i)] = b.win.at(i)
			}
			b.mu.Unlock()
		}
	})
	var wg sync.WaitGroup
	var total sync.Map
	for g := range 4 {
		wg.Go(func() {
			count := 0
			for i := range 20000 {
				if g == 0 && i%100 == 0 {
					if ok, err := b.Allow(ctx); err != nil {
						t.Error(err)
					} else if ok {
						count++
					}
					continue
				}
				if err := b.Wait(ctx); err != nil {
					t.Error(err)
					return
				}
				count++
			}
			total.Store(g, count)
		})
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	var admitted uint64
	total.Range(func(_, v any) bool { admitted += uint64(v.(int)); return true })
	if got := b.Stats().Admitted; got != admitted {
		t.Fatalf("Stats().Admitted = %d, want %d", got, admitted)
	}
	checked := 0
	for i, c := range history {
		if next, ok := history[i+1]; ok && next < c {
			t.Fatalf("completion %d at %d, after completion %d at %d", i+1, next, i, c)
		}
		if later, ok := history[i+n]; ok {
			checked++
			if time.Duration(later-c) < w {
				t.Fatalf("completions %d and %d are %v apart: %d within %v", i, i+n, time.Duration(later-c), n+1, w)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d windows pieced together from the copies of %d admissions", checked, admitted)
	}
	t.Logf("%d admissions, %d completions pieced together, %d windows checked", admitted, len(history), checked)
}
