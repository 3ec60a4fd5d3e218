// Package attempt is the in-flight and retry policy that rxthrottle's
// adapters share: httpthrottle's Transport, the ThrottleMap operators and
// grpcthrottle's interceptors read the same Policy, with the same
// defaults, and keep a token past its attempt's error the same way (Holds).
//
// The defaults, stated here once for every adapter:
//
//   - DefaultMaxAttempts (3): a call that may be sent twice is tried up to
//     three times in all, each attempt with a token of its own, after the
//     pause a refusal set: for httpthrottle's Transport, a request refused
//     with 429 whose body can be sent again, and a timed-out attempt
//     (WithAttemptTimeout) of one the server may see twice (an idempotent
//     method or an idempotency key); for ThrottleMap, an item fn answered
//     with rxthrottle.RetryAfter. grpcthrottle retries an RPC only once
//     its WithMaxAttempts says the RPCs may be sent twice.
//   - DefaultInFlightBound (10 s): an attempt that failed after its request
//     may have been written keeps its token held that long after the
//     error, unless something shows sooner that the request can no longer
//     arrive (SPEC.md, "Held tokens").
//   - DefaultMaxPause (10 min): a server's retry delay further away is
//     capped to it.
//
// Users set them through each adapter's options (rxthrottle.WithMaxAttempts,
// httpthrottle.WithMaxAttempts, grpcthrottle.WithMaxAttempts, the
// WithInFlightBound of each, and the WithMaxPause of httpthrottle and
// grpcthrottle), which all set a Policy of this package.
package attempt
