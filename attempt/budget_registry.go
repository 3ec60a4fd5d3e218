package attempt

import (
	"reflect"
	"runtime"
	"sync"
	"time"
	"weak"
)

// The registry holds the counts of each limiter and spec, so that every
// adapter over one limiter counts against one budget, for as long as the
// limiter lives, without keeping it alive: memory stays bounded as
// limiters come and go (per tenant, per test, per reload).
//
//   - A limiter that is a pointer (the root's Bucket and Keyed,
//     redisstore's, most Limiters) is keyed by a weak pointer to it, and a
//     cleanup on it lets go of its counts once it is collected. The
//     counts never hold it: the window closure, which does, lives in each
//     adapter's Budget, and an adapter alive keeps its limiter alive.
//   - Any other limiter (a comparable value, such as rxthrottle.ForKey's)
//     has no life of its own to follow: its counts live while a Budget of
//     them is reachable (one per BudgetFor call, each counted in refs and
//     let go of by a cleanup), so adapters alive together count together
//     and one made after the last is collected starts afresh.
//
// The limiter's own cleanup counts as one ref, so both cases are one rule:
// the counts go when nothing that could still count on them is left.
var budgets struct {
	mu      sync.Mutex
	entries map[budgetKey]*budgetEntry
}

type budgetKey struct {
	limiter any // a weak.Pointer[byte] to a pointer limiter, else the limiter
	spec    RetryBudget
}

// budgetEntry is a limiter's counts and what may still count on them.
type budgetEntry struct {
	key   budgetKey
	state *budgetState
	refs  int // Budgets not yet collected, plus one while a pointer limiter lives
}

// BudgetFor returns a Budget over the counts shared by every adapter over
// limiter (a comparable value: usually the limiter's pointer) with spec,
// counting over the window that window returns. For a limiter that is a
// pointer the counts live as long as it does, and are freed once it is
// collected; for any other limiter, while a Budget BudgetFor returned for
// it is reachable (an adapter keeps its own). A limiter that is not
// comparable (a value holding a slice, a map or a func) has no identity
// to share by: each call gets counts of its own. The registry never keeps
// a limiter alive.
func BudgetFor(limiter any, spec RetryBudget, window func() time.Duration) (*Budget, error) {
	if err := checkBudget(spec, window); err != nil {
		return nil, err
	}
	id, obj, ok := identity(limiter)
	if !ok {
		// Nothing to key it by: counts of this adapter's own.
		return &Budget{s: &budgetState{spec: spec}, window: window}, nil
	}
	k := budgetKey{id, spec}
	budgets.mu.Lock()
	defer budgets.mu.Unlock()
	e := budgets.entries[k]
	if e == nil {
		if budgets.entries == nil {
			budgets.entries = make(map[budgetKey]*budgetEntry)
		}
		e = &budgetEntry{key: k, state: &budgetState{spec: spec}}
		budgets.entries[k] = e
		if obj != nil {
			// e holds only a weak pointer to the limiter: it can be
			// collected. (A limiter outside the heap, a global or of size
			// zero, is never collected, and its cleanup never runs.)
			e.refs++
			runtime.AddCleanup(obj, releaseBudget, e)
		}
	}
	e.refs++
	h := &Budget{s: e.state, window: window}
	// e holds the counts, never h: h can be collected.
	runtime.AddCleanup(h, releaseBudget, e)
	return h, nil
}

// identity returns what limiter's counts are keyed by: a weak pointer to
// it if it is a non-nil pointer, with the pointer to attach its cleanup
// to; else the limiter itself, and nil. ok is false for a limiter that is
// not comparable (a value holding a slice, a map or a func), which cannot
// key a map.
func identity(limiter any) (id any, obj *byte, ok bool) {
	v := reflect.ValueOf(limiter)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return limiter, nil, !v.IsValid() || v.Comparable()
	}
	// As a *byte: weak.Make and AddCleanup need a typed pointer, and
	// limiter's type is not known here. Weak pointers made from equal
	// pointers are equal, and a new object at a collected one's address
	// gets a new weak pointer, so the key is the object's own.
	obj = (*byte)(v.UnsafePointer())
	return weak.Make(obj), obj, true
}

// releaseBudget lets go of one ref of e (a Budget collected, or its
// limiter), and of e at its last. It runs on the runtime's cleanup
// goroutine; a BudgetFor at the same time either finds e still there (and
// takes a ref of it) or makes fresh counts, both under the lock.
func releaseBudget(e *budgetEntry) {
	budgets.mu.Lock()
	defer budgets.mu.Unlock()
	e.refs--
	if e.refs == 0 && budgets.entries[e.key] == e {
		delete(budgets.entries, e.key)
	}
}
