package attempt

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// RetryBudget is the share of a limiter's admissions that retries may take
// (SPEC.md, "Retry budget"): in every window [s, s+W) of the admissions'
// timeline (W the limiter's first limit's window), the retries are at most
// Ratio times the first attempts plus Min. A retry is decided at its
// admission from the admissions so far, and goes only if every window that
// holds its instant keeps to the rule with it. A retry over the budget is
// not sent: the call ends with its last error or refusal. As gRPC's retry
// throttling and AWS's retry quota do, it keeps a server that refuses a lot
// from seeing most of the quota spent on retries.
type RetryBudget struct {
	// Ratio is the retries allowed per first attempt, e.g. 0.1.
	Ratio float64
	// Min is the retries allowed in any window whatever the first
	// attempts, so that a quiet client can still retry. With Min 0, a
	// retry goes only at an instant that has first attempts of its own
	// (the window that starts at it may get no other): set at least 1.
	Min int
}

// checkBudget returns an error for a bad spec or a nil window, or nil.
func checkBudget(spec RetryBudget, window func() time.Duration) error {
	if window == nil {
		return errors.New("attempt: a retry budget needs its limiter's window: the window function is nil")
	}
	return spec.check()
}

// check returns an error naming the option for a bad budget, or nil.
func (b RetryBudget) check() error {
	if !(b.Ratio >= 0) || math.IsInf(b.Ratio, 1) || b.Min < 0 {
		return fmt.Errorf("WithRetryBudget(%v, %d): the ratio must be finite and neither may be negative", b.Ratio, b.Min)
	}
	return nil
}

// Budget counts one limiter's first attempts and retries against a
// RetryBudget. The Budgets BudgetFor returns for one limiter and spec
// share their counts, so that every adapter over the limiter counts
// against one budget. It is safe for concurrent use; time is an argument.
type Budget struct {
	// s is the counts. Each adapter holds a Budget of its own over them
	// (BudgetFor), so that the counts never hold the limiter: the window
	// closure, which does, is the Budget's (budget_registry.go).
	s      *budgetState
	window func() time.Duration // the limiter's W: its first limit's window
}

// budgetState is the counts behind one or more Budgets.
//
// The rule it applies at a retry at t: for every start s in (t-W, t],
// R[s,t] + 1 <= Ratio*F[s,t] + Min, with R and F the retries and first
// attempts counted in [s, t]. Only the starts at t and at earlier retries
// can be the worst; of those, it keeps the ones that can still be (a
// monotone queue, ordered by R - Ratio*F of the counts before them), so a
// count costs O(1) amortised and the memory is at most the retries of one
// window.
type budgetState struct {
	spec RetryBudget

	mu           sync.Mutex
	firsts       int64      // every first attempt counted
	retries      int64      // every retry counted
	last         time.Time  // the latest instant counted
	lastF, lastR int64      // the counts before last's
	starts       []windowAt // the starts that may be the worst, oldest first
}

// windowAt is a window's start: its instant and the counts before it.
type windowAt struct {
	at      time.Time
	firsts  int64
	retries int64
}

// NewBudget returns a Budget for spec over the window that window
// returns (read at each count, so that a limit changed by SetLimit counts
// at once; a window of 0 or less counts each instant apart), or an error
// for a bad spec or a nil window.
func NewBudget(spec RetryBudget, window func() time.Duration) (*Budget, error) {
	if err := checkBudget(spec, window); err != nil {
		return nil, err
	}
	return &Budget{s: &budgetState{spec: spec}, window: window}, nil
}

// First records a first attempt at now; a nil Budget records nothing.
func (h *Budget) First(now time.Time) {
	if h == nil {
		return
	}
	b := h.s
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at(now)
	b.firsts++
}

// Retry reports whether a retry at now is within the budget over every
// window that holds now, and records it if it is. A nil Budget allows
// every retry.
func (h *Budget) Retry(now time.Time) bool {
	if h == nil {
		return true
	}
	w := h.window() // the limiter's code: read before the lock
	b := h.s
	b.mu.Lock()
	defer b.mu.Unlock()
	here := b.at(now)
	for len(b.starts) > 0 && !b.starts[0].at.After(b.last.Add(-w)) {
		b.starts = b.starts[1:] // out of every window that holds now
	}
	if b.over(here) || len(b.starts) > 0 && b.over(b.starts[0]) {
		return false
	}
	if n := len(b.starts); n == 0 || !b.starts[n-1].at.Equal(here.at) {
		for n > 0 && !b.lower(b.starts[n-1], here) {
			n-- // here is no worse a start, and stays longer
		}
		b.starts = append(b.starts[:n], here)
	}
	b.retries++
	return true
}

// at moves b's clock to now and returns the start at it. An instant
// earlier than one already counted (two callers' readings taken in the
// other order) counts as that one: later, never earlier. Requires b.mu.
func (b *budgetState) at(now time.Time) windowAt {
	if now.After(b.last) || b.last.IsZero() {
		b.last, b.lastF, b.lastR = now, b.firsts, b.retries
	}
	return windowAt{at: b.last, firsts: b.lastF, retries: b.lastR}
}

// over reports whether a retry now breaks the window that starts at s.
// Requires b.mu.
func (b *budgetState) over(s windowAt) bool {
	r, f := b.retries-s.retries, b.firsts-s.firsts
	return float64(r+1) > b.spec.Ratio*float64(f)+float64(b.spec.Min)
}

// lower reports whether start a, older than c, has the lower R - Ratio*F
// of the counts before it: then a makes the worse window of the two for
// every retry to come while both are in it, and c does not replace it.
// Requires b.mu.
func (b *budgetState) lower(a, c windowAt) bool {
	return float64(c.retries-a.retries)-b.spec.Ratio*float64(c.firsts-a.firsts) > 0
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
