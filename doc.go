// Package rxthrottle is client-side, lossless throttling: every call or item
// goes, as early as a quota allows and never more than the quota.
//
// A Limit is N tokens per sliding window W (Per(5, time.Second)). Each caller
// or item waits for a token, takes it and goes; the token is renewed exactly
// W after that moment, or, for a held token, W after the work it paid for is
// done. So at most N go in any window of length W, a burst of up to N goes
// at once, nothing is dropped and the order is kept; and with held tokens a
// server that counts arrivals sees at most N in any window, whatever the
// network does between client and server. The exact schedule,
// e_i = max(a_i, e_(i-1), e_(i-N) + W) and its forms for held tokens,
// weights and spacing, is in SPEC.md; every limiter here keeps it to the
// nanosecond on a virtual clock.
//
// Which API to use:
//
//   - Bucket (NewBucket): one quota for blocking code: Wait, Allow, Reserve.
//     WithLimit adds more limits that hold at once (5 per second and 100
//     per minute).
//   - Acquire and Token.Release: hold the token for the work it pays for (an
//     HTTP request until its response); httpthrottle.Transport does it for
//     every request. Token.Cancel gives back a token never used.
//   - WaitN, AcquireN, AllowN: a call that costs n tokens (points). WithSpacing
//     spreads departures for servers that estimate their window.
//   - Throttle and ThrottleWith: the same as rxgo operators; ThrottleWith
//     shares one Limiter between pipelines. ThrottleMap runs a function per
//     item while its token is held (API calls in a pipeline).
//   - Keyed (NewKeyed) and ThrottleBy: one independent quota per key (a
//     user, an API token, a host).
//   - Pause defers everyone (a 429's Retry-After); SetLimit changes a live
//     limit; Stats, OnWait and OnAdmit show what a limiter does.
//
// The Limiter and KeyedLimiter interfaces are what the operators and the
// subpackages take: httpthrottle (an http.RoundTripper and a server
// middleware), redisstore (one quota shared by many processes through
// Redis), guard (refusing, rather than queueing, over a fixed window with a
// cool-down) and marble (marble tests for any rxgo pipeline).
//
// Time comes from an injected clock (WithClock, github.com/benbjohnson/clock;
// the real clock by default), read on the monotonic clock. Every limiter is
// safe for concurrent use; invalid input is an error, never a panic.
package rxthrottle
