package attempt

import (
	"fmt"
	"time"
)

// DefaultMaxAttempts is how many attempts in all an adapter makes for a
// call that may be sent twice, unless WithMaxAttempts says otherwise: the
// first and two retries. Each adapter retries only what the server may
// safely see again:
//
//   - httpthrottle's Transport: a request refused with 429 (a learning
//     Transport's 503 too) whose body can be sent again, unless the server
//     says x-should-retry: false; and a request whose attempt timed out
//     (WithAttemptTimeout) if, besides, its method is idempotent or it
//     has an idempotency key, as net/http judges its own re-sends. A
//     request whose body cannot be sent again is sent once.
//   - rxthrottle's ThrottleMap: an item fn answered with RetryAfter (fn
//     says the server refused it and asked to wait).
//   - grpcthrottle's unary interceptor: none by default. gRPC says nothing
//     on the wire of whether a method may run twice, so an RPC is sent
//     again (after RESOURCE_EXHAUSTED) only once WithMaxAttempts is given,
//     which says that it may; streams never.
//
// Every retry takes a token of its own and waits out the pause the refusal
// set on the limiter, so retries never take the server over its quota;
// they do take a share of it, which WithRetryBudget caps. A timed-out
// attempt stays open behind its retry, and its late answer, if it comes
// while the retry still waits for its token, is the call's: the retry is
// not sent (SPEC.md, "Requests on the wire").
const DefaultMaxAttempts = 3

// DefaultInFlightBound is how long an adapter holds the token of an
// attempt that failed after its request may have been written (a timeout,
// a reset, a context ended in flight) unless WithInFlightBound says
// otherwise: the request can still reach the server that long after the
// error, and its token renews one window after the bound has passed.
//
// Ten seconds covers a request still in a kernel's send queue or on the
// network (TCP retransmits a lost segment after 0.2, 0.6, 1.4, 3 and 6.2 s
// at the shortest, so five losses in a row), and a proxy or load balancer
// that queues a request for a few seconds. It does not cover a proxy that
// queues for minutes: raise the bound there. httpthrottle's Transport ends
// most such holds sooner, at the attempt's late answer or at the peer's
// close of a direct connection; the others wait out the bound.
const DefaultInFlightBound = 10 * time.Second

// Policy is what an adapter does with an attempt that failed: how many
// attempts a refused call makes, how long a refusal may pause the limiter,
// and how long a token stays held after an error whose request may still
// arrive. The zero Policy is not valid; start
// from Default.
type Policy struct {
	// MaxAttempts is the number of attempts in all for a call that may be
	// sent twice (see DefaultMaxAttempts for which); 1 never retries.
	MaxAttempts int
	// InFlightBound is how long a token stays held after an error whose
	// request may still arrive; 0 releases it at the error.
	InFlightBound time.Duration
	// Budget, if set, caps the retries' share of the limiter's admissions
	// (WithRetryBudget); nil sets no cap beyond MaxAttempts.
	Budget *RetryBudget
	// MaxKeptOpen caps the attempts an adapter keeps open after their
	// callers gave up, waiting for the server to be done with them
	// (WithMaxKeptOpen); beyond it a given-up attempt is closed at once
	// and its token held for InFlightBound. 0 keeps none open.
	MaxKeptOpen int
	// StrictInFlightBound: a given-up attempt's token waits for its answer
	// or InFlightBound, never released at the peer's close of its
	// connection (WithStrictInFlightBound, for use behind a proxy).
	StrictInFlightBound bool
	// MaxPause is the longest pause a server's refusal may set on the
	// limiter (WithMaxPause): a longer delay is capped to it.
	MaxPause time.Duration
}

// Default returns the Policy with DefaultMaxAttempts, DefaultInFlightBound,
// DefaultMaxKeptOpen and DefaultMaxPause.
func Default() Policy {
	return Policy{
		MaxAttempts: DefaultMaxAttempts, InFlightBound: DefaultInFlightBound,
		MaxKeptOpen: DefaultMaxKeptOpen, MaxPause: DefaultMaxPause,
	}
}

// Check returns an error naming the option that set a bad value, or nil.
// The message has no package prefix: each adapter adds its own.
func (p Policy) Check() error {
	switch {
	case p.MaxPause <= 0:
		return fmt.Errorf("WithMaxPause(%v): the maximum pause must be positive", p.MaxPause)
	case p.MaxAttempts < 1:
		return fmt.Errorf("WithMaxAttempts(%d): at least 1 attempt is required", p.MaxAttempts)
	case p.InFlightBound < 0:
		return fmt.Errorf("WithInFlightBound(%v): the bound must not be negative", p.InFlightBound)
	case p.MaxKeptOpen < 0:
		return fmt.Errorf("WithMaxKeptOpen(%d): the cap must not be negative", p.MaxKeptOpen)
	case p.Budget != nil:
		return p.Budget.check()
	}
	return nil
}

// BudgetFor returns the Counter of p's RetryBudget for the adapters over
// limiter (whose window window returns): the limiter's own if it is a
// SharedBudget, else a Budget over the counts every adapter over it
// shares in memory (freed with the limiter, see BudgetFor);
// without a RetryBudget, a Counter that allows every retry.
func (p Policy) BudgetFor(limiter any, window func() time.Duration) Counter {
	switch l := limiter.(type) {
	case nil:
	case SharedBudget:
		if p.Budget != nil {
			return l.RetryBudget(*p.Budget)
		}
	}
	if p.Budget == nil {
		return noBudget{}
	}
	b, _ := BudgetFor(limiter, *p.Budget, window) // p was checked
	return b
}

// Retry reports whether a call whose attempt number n (from 1) was refused
// may make another attempt.
func (p Policy) Retry(n int) bool { return n < p.MaxAttempts }

// Option changes a Policy. Each adapter's WithMaxAttempts,
// WithInFlightBound, WithRetryBudget, WithMaxKeptOpen,
// WithStrictInFlightBound and WithMaxPause wrap one.
type Option func(*Policy)

// MaxAttempts sets Policy.MaxAttempts.
func MaxAttempts(n int) Option { return func(p *Policy) { p.MaxAttempts = n } }

// InFlightBound sets Policy.InFlightBound.
func InFlightBound(d time.Duration) Option { return func(p *Policy) { p.InFlightBound = d } }

// MaxKeptOpen sets Policy.MaxKeptOpen.
func MaxKeptOpen(n int) Option { return func(p *Policy) { p.MaxKeptOpen = n } }

// MaxPause sets Policy.MaxPause.
func MaxPause(d time.Duration) Option { return func(p *Policy) { p.MaxPause = d } }

// StrictInFlightBound sets Policy.StrictInFlightBound.
func StrictInFlightBound() Option { return func(p *Policy) { p.StrictInFlightBound = true } }

// WithRetryBudget sets Policy.Budget to a RetryBudget of ratio and min.
func WithRetryBudget(ratio float64, min int) Option {
	return func(p *Policy) { p.Budget = &RetryBudget{Ratio: ratio, Min: min} }
}
