// Package attempt is the in-flight and retry policy that rxthrottle's
// adapters share: httpthrottle's Transport, the ThrottleMap operators and
// grpcthrottle's interceptors read the same Policy, with the same
// defaults, and keep a token past its attempt's error the same way (Holds).
//
// The defaults, stated here once for every adapter:
//
//   - DefaultMaxAttempts (1): a call the server refused and asked to wait
//     (429 Too Many Requests, RESOURCE_EXHAUSTED, a ThrottleMap function's
//     rxthrottle.RetryAfter) pauses the limiter and is not tried again
//     unless WithMaxAttempts allows more attempts; each then takes a token
//     of its own, after the pause the refusal asked for. Under the same
//     option, httpthrottle's Transport also retries an attempt that timed
//     out (WithAttemptTimeout) of a request the server may see twice.
//   - DefaultInFlightBound (10 s): an attempt that failed after its request
//     may have been written keeps its token held that long after the
//     error, unless something shows sooner that the request can no longer
//     arrive (SPEC.md, "Held tokens").
//
// Users set them through each adapter's options (rxthrottle.WithMaxAttempts,
// httpthrottle.WithMaxAttempts, grpcthrottle.WithMaxAttempts, and the
// WithInFlightBound of each), which all set a Policy of this package.
package attempt
