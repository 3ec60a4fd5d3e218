package attempt

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLimiter stands for a limiter: BudgetFor keys on its pointer, and
// the window closure over it holds it, as an adapter's does.
type fakeLimiter struct{ windowSeconds int }

func windowOf(l *fakeLimiter) func() time.Duration {
	return func() time.Duration { return time.Duration(l.windowSeconds) * time.Second }
}

// registeredFor returns how many limiters the registry holds counts of
// for spec: each test has a spec of its own, so that the others' counts,
// not yet collected, are not seen.
func registeredFor(spec RetryBudget) int {
	budgets.mu.Lock()
	defer budgets.mu.Unlock()
	n := 0
	for k := range budgets.entries {
		if k.spec == spec {
			n++
		}
	}
	return n
}

// collectUntil runs the collector (and so the cleanups) until done holds,
// for at most about two seconds, and reports whether it came to hold. The
// cleanups run on their own goroutine: done is what must hold eventually,
// bounded so that a leak fails instead of hanging.
func collectUntil(done func() bool) bool {
	for range 2000 {
		if done() {
			return true
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	return done()
}

// countOnce makes a limiter and an adapter's Budget over it, counts on it
// and drops both.
func countOnce(spec RetryBudget, i int) {
	l := &fakeLimiter{windowSeconds: 1 + i%3}
	b, err := BudgetFor(l, spec, windowOf(l))
	if err != nil {
		panic(err)
	}
	b.First(time.Unix(int64(i), 0))
	b.Retry(time.Unix(int64(i), 0))
}

// A program that makes limiters and adapters over time (per tenant, per
// test, per reload) must not keep each one's budget, and so its limiter,
// for ever: once no Budget of a limiter is reachable, the registry lets go.
func TestBudgetForFreesUnusedLimiters(t *testing.T) {
	spec := RetryBudget{Ratio: 0.5, Min: 3}
	const limiters = 1000
	for i := range limiters {
		countOnce(spec, i)
	}
	if !collectUntil(func() bool { return registeredFor(spec) == 0 }) {
		t.Fatalf("after every Budget was dropped and collected, the registry still holds %d of %d limiters", registeredFor(spec), limiters)
	}
}

// While one adapter's Budget is alive, a later BudgetFor over the same
// limiter shares its counts, whatever the collector does meanwhile.
func TestBudgetForSharesWhileHeld(t *testing.T) {
	spec := RetryBudget{Ratio: 0, Min: 1}
	t0 := time.Unix(0, 0)
	l, other := &fakeLimiter{windowSeconds: 1}, &fakeLimiter{windowSeconds: 1}
	a, _ := BudgetFor(l, spec, windowOf(l))
	for range 20 { // a, used below, must survive the collections and their cleanups
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if !a.Retry(t0) {
		t.Fatal("the first retry of an empty budget with Min 1 was refused")
	}
	b, _ := BudgetFor(l, spec, windowOf(l))
	if b.Retry(t0) {
		t.Error("a second Budget over the same limiter did not see the first's retry")
	}
	if c, _ := BudgetFor(other, spec, windowOf(other)); !c.Retry(t0) {
		t.Error("a Budget over another limiter saw the first's retry")
	}
	runtime.KeepAlive(a)
}

// While one Budget of a limiter is held, adapters made and dropped
// concurrently with the collector's cleanups all count against its
// counts: a release never takes the counts from under a live Budget.
func TestBudgetForSharesUnderChurn(t *testing.T) {
	spec := RetryBudget{Ratio: 0, Min: 5}
	t0 := time.Unix(0, 0)
	l := &fakeLimiter{windowSeconds: 1}
	keep, _ := BudgetFor(l, spec, windowOf(l))
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				b, _ := BudgetFor(l, spec, windowOf(l))
				if b.Retry(t0) {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			runtime.GC()
			time.Sleep(100 * time.Microsecond)
		}
	})
	wg.Wait()
	if got := admitted.Load(); got != int64(spec.Min) {
		t.Errorf("%d retries admitted over one held budget of Min %d", got, spec.Min)
	}
	runtime.KeepAlive(keep)
}

// retryOnceOver counts one retry on an adapter's Budget over l and drops
// the Budget.
func retryOnceOver(l any, spec RetryBudget, at time.Time) bool {
	b, _ := BudgetFor(l, spec, func() time.Duration { return time.Second })
	return b.Retry(at)
}

// A pointer limiter's counts last as long as it does, whatever its
// adapters' Budgets: a Transport made per request over one long-lived
// Bucket counts with the ones before it, after they are collected.
func TestBudgetForKeepsCountsWhileLimiterLives(t *testing.T) {
	spec := RetryBudget{Ratio: 0, Min: 2}
	t0 := time.Unix(0, 0)
	l := &fakeLimiter{windowSeconds: 1}
	for i, want := range []bool{true, true} {
		if got := retryOnceOver(l, spec, t0); got != want {
			t.Fatalf("retry %d = %v, want %v", i, got, want)
		}
	}
	for range 20 { // every Budget above collected, and its cleanup run
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if retryOnceOver(l, spec, t0) {
		t.Error("a third retry in one window of Min 2 went: the counts of a live limiter were lost with its adapters")
	}
	runtime.KeepAlive(l)
	if !collectUntil(func() bool { return registeredFor(spec) == 0 }) {
		t.Fatal("the registry kept the counts of a limiter collected")
	}
}

// valueLimiter is a limiter that is not a pointer, as ForKey's is: equal
// values are one limiter.
type valueLimiter struct {
	of  *fakeLimiter
	key string
}

// A limiter that is not a pointer has no life to follow: its counts are
// shared by the Budgets alive together, freed once none is, and a Budget
// made after that starts afresh.
func TestBudgetForValueLimiter(t *testing.T) {
	spec := RetryBudget{Ratio: 0, Min: 1}
	t0 := time.Unix(0, 0)
	of := &fakeLimiter{windowSeconds: 1}
	alice := valueLimiter{of, "alice"}
	held, _ := BudgetFor(alice, spec, windowOf(of))
	if !held.Retry(t0) {
		t.Fatal("the first retry of an empty budget with Min 1 was refused")
	}
	if retryOnceOver(valueLimiter{of, "alice"}, spec, t0) {
		t.Error("an equal value did not share the held Budget's counts")
	}
	if !retryOnceOver(valueLimiter{of, "bob"}, spec, t0) {
		t.Error("another key's value saw alice's retry")
	}
	runtime.KeepAlive(held)
	held = nil
	if !collectUntil(func() bool { return registeredFor(spec) == 0 }) {
		t.Fatalf("the registry still holds %d value limiters with no Budget left", registeredFor(spec))
	}
	if !retryOnceOver(alice, spec, t0) {
		t.Error("a Budget made after the last was collected kept the old counts")
	}
}

// A limiter outside the heap (a global, or of size zero) is never
// collected: BudgetFor over one works, and its counts stay.
func TestBudgetForGlobalLimiter(t *testing.T) {
	spec := RetryBudget{Ratio: 0.25, Min: 1} // this test's own: its counts stay
	// An instant of this run's own, a window past the last run's: the
	// counts of a limiter never collected outlive a run (-count).
	t0 := time.Unix(globalRuns.Add(10), 0)
	if !retryOnceOver(&globalLimiter, spec, t0) {
		t.Fatal("the first retry was refused")
	}
	if !retryOnceOver(new(struct{}), spec, t0) {
		t.Fatal("the first retry over a zero-size limiter was refused")
	}
	if retryOnceOver(&globalLimiter, spec, t0) {
		t.Error("the global limiter's counts were lost")
	}
}

var (
	globalLimiter fakeLimiter
	globalRuns    atomic.Int64
)
