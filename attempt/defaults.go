package attempt

import "time"

// DefaultMaxKeptOpen is how many attempts an adapter keeps open after
// their callers gave up, waiting for the server to be done with them
// (their late answers), unless its WithMaxKeptOpen says otherwise:
// httpthrottle's Transport and grpcthrottle's interceptors (unary RPCs and
// streams). Each holds a goroutine (and, over HTTP/1, a connection)
// meanwhile; beyond the cap a given-up attempt is closed at once and its
// token held for the in-flight bound.
const DefaultMaxKeptOpen = 256

// DefaultMaxPause is the longest pause an adapter accepts from a server's
// refusal (a 429's Retry-After, a RESOURCE_EXHAUSTED's RetryInfo, the delay
// of a ThrottleMap function's RetryAfter) unless its WithMaxPause says
// otherwise (ThrottleMap has none): a delay further away is capped to it,
// so that one buggy or hostile answer cannot stall a client for days.
const DefaultMaxPause = 10 * time.Minute
