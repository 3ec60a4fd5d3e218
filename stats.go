package rxthrottle

import "time"

// Stats is a snapshot of a limiter's counters. Counters (Admitted, Waited,
// Cancelled, Refused, Failed, TotalWait) only grow; gauges (Queued, Free,
// KeysLive, KeysBlocked) describe the instant of the snapshot.
//
// Every caller of Wait or Acquire (and their N forms) is counted once it
// has ended, in exactly one of Admitted, Cancelled, Refused and Failed:
// their sum, plus Queued, is the number of such calls, on every limiter,
// but for the calls refused before they reach it: for their own arguments
// (a nil context, a cost out of range, an empty key, a limiter not made by
// its constructor) or, on a Keyed, for a new key beyond WithMaxKeys
// (ErrTooManyKeys), which count nowhere. A caller whose context had ended
// already when it called counts in Cancelled, as one whose context ends
// while it waits or whose deadline refuses it at arrival: a call that
// returned its context's error is in Cancelled however early its context
// ended. A caller of Allow counts in Admitted if it got its tokens and in
// Failed if the limiter's store failed it; an Allow that returns false
// otherwise, or an error for its context or its arguments, counts nowhere:
// it never waits, so there is nothing to cancel.
type Stats struct {
	// Admitted is the number of callers or items let through.
	Admitted uint64
	// Waited is how many of them had to wait for a token (or a pause).
	Waited uint64
	// Cancelled is the number of waits that ended without a token: their
	// context ended (before the call, too), or its deadline came before
	// the earliest instant they could go and they were refused at arrival
	// (ErrDeadline), or a SetLimit lowered the smallest N below their cost
	// while they waited (ErrInvalidCost: SPEC.md, "Changing limits"; a
	// cost too large at the call counts nowhere).
	Cancelled uint64
	// Refused is the number of callers refused at once by the queue bound
	// (WithMaxQueue, ErrQueueFull).
	Refused uint64
	// Failed is the number of callers that ended with an error of the
	// limiter's store: a shared limiter's (redisstore's) *StoreError under
	// its FailClosed policy, Redis unreachable, timed out or kept back by
	// the circuit breaker. Under FailOpen such a caller counts in Admitted,
	// and under FallbackLocal as the local limiter ended it (Admitted, or
	// Cancelled). 0 for the in-memory limiters, which have no store.
	Failed uint64
	// TotalWait is the sum of the waits of admitted callers.
	TotalWait time.Duration
	// MaxWait is the longest wait of an admitted caller.
	MaxWait time.Duration
	// Queued is the number of callers waiting now.
	Queued int
	// Held is the number of tokens held now by Tokens from Acquire (of a
	// Bucket; 0 for other limiters).
	Held int
	// Free is the number of tokens free now (for several limits, the
	// smallest; for a keyed limiter, 0).
	Free int
	// KeysLive is the number of keys whose state is kept (keyed limiters).
	KeysLive int
	// KeysBlocked is the number of keys with at least one caller waiting
	// now, for a token or for a pause to end (keyed limiters). A paused key
	// that nobody waits on is not counted: it holds nobody back.
	KeysBlocked int
	// ConcurrencyCap is the cap on holds open now (of a Bucket, or of one
	// key through ForKey over a Keyed; 0 for other limiters, over all keys
	// of a Keyed, and without one): WithConcurrency's, or
	// WithAdaptiveConcurrency's as it has moved. Keyed.ConcurrencyCap
	// returns a key's.
	ConcurrencyCap int
	// Released is the number of Tokens of Acquire whose call completed,
	// released or timed out, and TotalHold the sum of their holds, from
	// admission to the end (of a Bucket; 0 for other limiters):
	// TotalHold/Released is the mean time a call held its token. A Token
	// given back unused (Cancel, ReleaseN(0)) counts in neither.
	Released  uint64
	TotalHold time.Duration
}
