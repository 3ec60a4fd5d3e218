package attempt

// DefaultMaxKeptOpen is how many attempts an adapter keeps open after
// their callers gave up, waiting for the server to be done with them
// (their late answers), unless its WithMaxKeptOpen says otherwise:
// httpthrottle's Transport and grpcthrottle's unary interceptor. Each holds
// a goroutine (and, over HTTP/1, a connection) meanwhile; beyond the cap a
// given-up attempt is closed at once and its token held for the in-flight
// bound.
const DefaultMaxKeptOpen = 256
