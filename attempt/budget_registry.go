package attempt

import (
	"runtime"
	"sync"
	"time"
)

// The registry holds the counts of each limiter and spec while some
// adapter over the limiter holds a Budget of them, so that every adapter
// over one limiter counts against one budget, and a limiter nothing uses
// any more is not kept alive by its budget. Weak keys alone would not free
// it: the counts' window closure holds the limiter, and Go has no
// ephemerons. So BudgetFor hands out one Budget per call, counts the ones
// alive in refs, and a cleanup on each lets go of the counts at the last.
var budgets struct {
	mu      sync.Mutex
	entries map[budgetKey]*budgetEntry
}

type budgetKey struct {
	limiter any
	spec    RetryBudget
}

// budgetEntry is a limiter's counts and the Budgets of them not yet
// collected.
type budgetEntry struct {
	key   budgetKey
	state *budgetState
	refs  int
}

// BudgetFor returns a Budget over the counts shared by every adapter over
// limiter (a comparable value: the limiter's pointer) with spec, made at
// the first call with window. The counts live while some Budget that
// BudgetFor returned for them is reachable: an adapter keeps its own, and
// once no adapter over the limiter is left the garbage collector frees
// the counts and the registry lets go of the limiter. A BudgetFor after
// that starts from fresh counts.
func BudgetFor(limiter any, spec RetryBudget, window func() time.Duration) (*Budget, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	k := budgetKey{limiter, spec}
	budgets.mu.Lock()
	defer budgets.mu.Unlock()
	e := budgets.entries[k]
	if e == nil {
		if budgets.entries == nil {
			budgets.entries = make(map[budgetKey]*budgetEntry)
		}
		e = &budgetEntry{key: k, state: &budgetState{spec: spec, window: window}}
		budgets.entries[k] = e
	}
	e.refs++
	h := &Budget{s: e.state}
	// e holds the limiter and the counts, never h: h can be collected.
	runtime.AddCleanup(h, releaseBudget, e)
	return h, nil
}

// releaseBudget lets go of one Budget of e, and of e at its last. It runs
// on the runtime's cleanup goroutine once that Budget is unreachable; a
// BudgetFor at the same time either finds e still there (and takes a
// Budget of it) or makes fresh counts, both under the lock.
func releaseBudget(e *budgetEntry) {
	budgets.mu.Lock()
	defer budgets.mu.Unlock()
	e.refs--
	if e.refs == 0 && budgets.entries[e.key] == e {
		delete(budgets.entries, e.key)
	}
}
