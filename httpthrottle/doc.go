// Package httpthrottle fits rxthrottle to net/http on both sides of the wire.
//
// # Client side: Transport
//
// Transport is an http.RoundTripper that keeps a client within a quota as
// the server counts it: every request waits, with its own context, for a
// token of an rxthrottle.Limiter (one quota) or rxthrottle.KeyedLimiter (a
// quota per host, path or user) and holds it until its answer arrives, so
// that the server never sees more than the quota arrive in a window; and
// server pushback (429 or 503 with Retry-After, spent quota headers)
// pauses the limiter so the other requests wait too instead of being
// refused. Build it with NewTransport or NewKeyedTransport; its options are
// the TransportOption values (WithBase, WithClock, WithDepartureRenewal,
// WithMaxPause, WithMaxAttempts, WithInFlightBound, WithAttemptTimeout,
// WithTenantFunc, OnPushback, OnHeaderError). A request's context carries
// its priority and tenant to the limiter (rxthrottle.WithPriority,
// rxthrottle.WithTenant), or WithTenantFunc names the tenant from the
// request: the users of one API key then share it fairly.
//
// # Timeouts and re-sends: when the answer is back
//
// A token renews one window after its request's answer is back, which
// means: after the request can no longer arrive at the server. A response
// is an answer. An error is one only when the request was never written
// (no connection, or its headers never went): its token goes back unused.
// A request that timed out or was cancelled after it may have been written
// can still arrive later (a proxy or the network may still be delivering
// it), so its token stays held until it cannot: the caller has its error
// at once, but the attempt stays open behind it until its late answer's
// headers (the server has it: released then), the peer's close or reset
// of a direct connection (released then; WithStrictInFlightBound behind a
// proxy), or the in-flight bound (WithInFlightBound, 10 seconds by
// default), where the Transport closes the connection as a reset. The
// token renews a window after that. Raise the bound if something between
// you and the server queues requests longer; lower it only if you know
// requests cannot arrive that late.
//
// Every attempt on the wire is an arrival at the server, and takes a token
// of its own: a retry of a 429 or of a timeout (WithMaxAttempts) and also the re-send
// net/http's Transport makes by itself when a reused connection drops
// before the answer (the Transport sees it through net/http/httptrace and
// makes it wait for a token before it goes). TransportStats counts
// attempts, re-sends, errors before and after writing, and tokens held
// past their error.
//
// To time only the network, not the wait for a token, use
// WithAttemptTimeout(d): each attempt gets d from its token's grant until
// its response headers. The request's context and http.Client.Timeout
// bound the whole call, queue included.
//
// # Server side: Middleware
//
// Middleware wraps an http.Handler with a *guard.Guard (package guard: a
// fixed-window quota per key with a cool-down once a key goes over it). Each
// request is keyed (by default by the client's address: an IPv4 address,
// or an IPv6 /64, so that a client cannot rotate through its network's
// addresses to escape its quota; see WithKey, KeyByHeader, KeyByContext,
// KeyByRemoteIP and KeyByRemotePrefix) and checked before the handler
// runs:
//
//   - allowed, it goes on to the handler, and the response carries the
//     quota headers RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset
//     and RateLimit-Policy (IETF draft-ietf-httpapi-ratelimit-headers up to
//     -06: integers, Reset in seconds from now, Policy as "30;w=60");
//   - refused, it never reaches the handler: the answer is 429 Too Many
//     Requests with Retry-After (whole seconds, rounded up), the same quota
//     headers and a JSON body {"message": "..."} that says how long to wait;
//     a new key that the guard's store has no room for (it holds at most
//     guard.DefaultMaxKeys live keys unless guard.WithMaxKeys says
//     otherwise) is refused the same way, told to come back when the
//     soonest live key ends, so memory stays bounded and no live key's
//     quota or block is forgotten to make room;
//   - if the guard cannot decide (its store fails), the answer is 503
//     Service Unavailable, or, with WithFailOpen, the request goes on.
//
// Its options are the MiddlewareOption values (WithKey, WithFailOpen,
// WithLogger). The guard itself logs a warning when a key is blocked.
//
// # Keys
//
// Both sides name a request's quota with the same KeyFunc type: KeyByHost,
// KeyByPathPrefix, KeyByHeader, KeyByContext, KeyByRemoteIP and
// KeyByRemotePrefix (server side only), or a function of your own.
//
// The two sides speak the same headers: a Transport talking to a server
// behind Middleware waits out the server's quota instead of being blocked.
//
// # Testing a client
//
// Package throttletest is a strict server to test a client against: an
// exact sliding log of arrivals, 429 with Retry-After, injected latency.
package httpthrottle
