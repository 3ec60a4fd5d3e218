// Package throttletest is a strict rate-limited HTTP server to test API
// clients against, in the style of net/http/httptest.
//
// A Server (or a Handler, without a network) enforces a quota of N requests
// per window W, and any further limits given with WithLimit, the way the
// strictest real APIs do: it keeps an exact log of the instants at which
// its handler sees each request (the request's arrival, read from its clock
// under its lock) and refuses a request that would be the (N+1)-th accepted
// arrival in a half-open window [t, t+W). A refused request never reaches
// the wrapped handler; its answer is 429 Too Many Requests with Retry-After
// in whole seconds, rounded up as the header requires, and the exact wait
// in the ExactRetryAfterHeader header: the time until the oldest accepted
// arrival in the window leaves it (for several limits, the longest such
// time). Refused requests are logged but do not count against the quota.
//
// A client that keeps SPEC.md's held-token schedule (rxthrottle's
// httpthrottle.Transport by default) is never refused by it, whatever the
// network does between the client and the server. To show that, the
// Server's Client can add a random delay on the way in (WithLatency,
// WithLatencyFunc) and open a fresh connection for every request
// (WithFreshConnections): the two things that bunch arrivals which left a
// window apart.
//
// To test a client against the servers in use, a Handler can announce its
// quota in their dialects (WithDialect), count it their way (WithAlgorithm)
// and answer with their quirks (WithQuirks: resets truncated or in
// milliseconds, bare 503 refusals, a dialect that changes on every answer),
// or announce a quota it does not enforce (WithAnnouncedLimit).
//
// The log (Log) and the counters (Stats) let a test check what the server
// saw. A Handler and a Server are safe for concurrent use.
//
// # Virtual time
//
// The clock is injectable (WithClock, a github.com/benbjohnson/clock
// Clock). Inside a testing/synctest bubble, where loopback sockets would
// keep the bubble's clock from moving, use a Handler as the client's
// RoundTripper: Handler.RoundTrip serves the request in-process, after the
// injected latency, on the bubble's virtual clock.
package throttletest
