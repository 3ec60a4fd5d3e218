package attempt

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// RetryBudget is the share of a limiter's admissions that retries may take
// (SPEC.md, "Retry budget"): a retry at t is sent only if, with it, the
// retries in the window of W up to t are at most Ratio times the first
// attempts in that window plus Min. A retry over the budget is not sent:
// the call ends with its last error or refusal. As gRPC's retry throttling
// and AWS's retry quota do, it keeps a server that refuses a lot from
// seeing most of the quota spent on retries.
type RetryBudget struct {
	// Ratio is the retries allowed per first attempt, e.g. 0.1.
	Ratio float64
	// Min is the retries allowed in any window whatever the first
	// attempts, so that a quiet client can still retry.
	Min int
}

// check returns an error naming the option for a bad budget, or nil.
func (b RetryBudget) check() error {
	if !(b.Ratio >= 0) || math.IsInf(b.Ratio, 1) || b.Min < 0 {
		return fmt.Errorf("WithRetryBudget(%v, %d): the ratio must be finite and neither may be negative", b.Ratio, b.Min)
	}
	return nil
}

// Budget counts one limiter's first attempts and retries against a
// RetryBudget. Every adapter over the same limiter shares one (BudgetFor).
// It is safe for concurrent use; time is an argument.
type Budget struct {
	spec   RetryBudget
	window func() time.Duration // the limiter's W: its first limit's window

	mu      sync.Mutex
	firsts  []time.Time // in time order, none older than the longest window asked
	retries []time.Time
}

// NewBudget returns a Budget for spec over the window that window
// returns (read at each count, so that a limit changed by SetLimit counts
// at once), or an error for a bad spec.
func NewBudget(spec RetryBudget, window func() time.Duration) (*Budget, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	return &Budget{spec: spec, window: window}, nil
}

// First records a first attempt at now; a nil Budget records nothing.
func (b *Budget) First(now time.Time) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.firsts = append(trim(b.firsts, now.Add(-b.window())), now)
}

// Retry reports whether a retry at now is within the budget over the
// window up to now, and records it if it is. A nil Budget allows every
// retry.
func (b *Budget) Retry(now time.Time) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	since := now.Add(-b.window())
	b.firsts = trim(b.firsts, since)
	b.retries = trim(b.retries, since)
	if float64(len(b.retries)+1) > b.spec.Ratio*float64(len(b.firsts))+float64(b.spec.Min) {
		return false
	}
	b.retries = append(b.retries, now)
	return true
}

// trim drops the instants of ts no later than since (the window of W up
// to now is (now-W, now]), reusing its array.
func trim(ts []time.Time, since time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(since) {
		i++
	}
	if i == 0 {
		return ts
	}
	return append(ts[:0], ts[i:]...)
}

// Counter counts a limiter's first attempts and retries against its
// retry budget: a *Budget in memory, or a store's for a limiter shared by
// several processes (SharedBudget). now is the caller's clock reading; a
// store may count on its own clock instead.
type Counter interface {
	// First records a first attempt at now.
	First(now time.Time)
	// Retry reports whether a retry at now is within the budget, and
	// records it if it is.
	Retry(now time.Time) bool
}

// SharedBudget is implemented by a limiter whose retry budget is counted
// in the store it shares with other processes (redisstore.Bucket), so that
// the budget binds every process: RetryBudget returns the Counter of spec.
type SharedBudget interface {
	RetryBudget(spec RetryBudget) Counter
}

// noBudget allows every retry: the Counter of a Policy without a budget.
type noBudget struct{}

func (noBudget) First(time.Time)      {}
func (noBudget) Retry(time.Time) bool { return true }

// budgets holds the Budget of each limiter and spec, so that every adapter
// over one limiter counts against one budget.
var budgets sync.Map // budgetKey -> *Budget

type budgetKey struct {
	limiter any
	spec    RetryBudget
}

// BudgetFor returns the Budget shared by every adapter over limiter (a
// comparable value: the limiter's pointer) with spec, made at the first
// call with window. The budget lives as long as the program: make
// limiters once.
func BudgetFor(limiter any, spec RetryBudget, window func() time.Duration) (*Budget, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	k := budgetKey{limiter, spec}
	if b, ok := budgets.Load(k); ok {
		return b.(*Budget), nil
	}
	b, _ := budgets.LoadOrStore(k, &Budget{spec: spec, window: window})
	return b.(*Budget), nil
}
