package redisstore

import "fmt"

// FailurePolicy says what Wait, Acquire and Allow (and their N forms) do
// when Redis cannot be reached or does not answer within the call timeout
// (WithTimeout), and while the circuit breaker keeps calls back after such
// a failure (WithRetryBackoff): then the policy answers at once, without a
// round trip. Whatever the policy, a failed call is passed to the OnError
// hook first, and nothing panics.
type FailurePolicy int

const (
	// FailClosed (the default) returns the error: Wait returns a
	// *StoreError wrapping ErrStoreUnavailable, Allow returns false and
	// the error. Nobody goes while the quota cannot be checked. Stats
	// counts such a caller in Failed (a caller whose context had ended
	// or whose deadline had passed when its call failed gets its
	// context's error instead, counted in Cancelled, as any).
	FailClosed FailurePolicy = iota
	// FailOpen lets the caller go at once, unthrottled, and returns nil
	// (Allow: true, nil; Acquire: the zero Token, a no-op), counted in
	// Stats as admitted without a wait. Use it when an outage of Redis
	// must not stop the traffic and the remote side tolerates a burst.
	FailOpen
	// FallbackLocal makes the caller wait on an in-memory rxthrottle
	// bucket of this process with the same limits, hold timeout and
	// spacing (rxthrottle.NewBucket or rxthrottle.NewKeyed; Acquire
	// returns the local bucket's Token). Each process then enforces the
	// whole quota on its own: P processes may admit up to P times the
	// quota until Redis answers again. Pause is forwarded to the local
	// bucket too, so a cool-down survives the outage. Stats counts the
	// caller as the local limiter ended it: admitted (with its wait), or
	// cancelled; the local limiter's own Stats are not added.
	FallbackLocal
)

// String returns the policy's name, as in the Go source.
func (p FailurePolicy) String() string {
	switch p {
	case FailClosed:
		return "FailClosed"
	case FailOpen:
		return "FailOpen"
	case FallbackLocal:
		return "FallbackLocal"
	}
	return fmt.Sprintf("FailurePolicy(%d)", int(p))
}

func (p FailurePolicy) valid() bool { return p >= FailClosed && p <= FallbackLocal }
