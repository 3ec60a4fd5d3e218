// # Leases
//
// Each admission above is a round trip. WithLease(max) makes a Bucket
// lease tokens instead: one script run admits a block of up to max tokens
// (DefaultLeaseBlock, 256, by default) as held tokens (SPEC.md, "Held
// tokens") with Redis's TIME T_r, and the process hands them to its own
// callers of Wait, WaitN, Acquire, Allow and AllowN with no round trip, in
// the order the in-memory limiters use (SPEC.md, "Priorities" and "Fair
// shares": priority first, then the tenants' shares, rxthrottle.WithTenant,
// then arrival within a tenant). What it keeps:
//
//   - The window, on Redis's clock. A lease is granted only for tokens
//     free now under every limit (N less the held tokens less the
//     completions a window can still reach, those of callers of other
//     processes that wait for a later departure included), never while a
//     pause lasts or while a reservation of any process is ahead (a lease
//     never overtakes a waiting caller), and fewer than asked is fine; none
//     sends the callers to the normal path. Leased tokens count as held in
//     Redis until their use is reported. A use at local time t is stamped
//     T_r + (t - t_send) + 0.1% + 1µs, t_send being when the request was
//     sent: Redis read T_r after that, so its clock at t is no later (the
//     0.1% covers the rates of two clocks, NTP's slew included). The error
//     is only ever late: a token renews W after a stamp at or after its
//     true use, never before. Uses are reported in the next script run of
//     the lease (with the next lease, or by a timer every poll interval:
//     WithPollInterval), each completing at its stamp, clamped to Redis's
//     now; tokens used within a 50th of the smallest window of each other
//     are reported as one run at the latest stamp of the run (the window
//     gets stricter by that, at most). A process that dies leaves its
//     leased tokens held until their lease deadline (the grant plus the
//     hold timeout, rxthrottle.WithHoldTimeout: keep it short where
//     processes die often), then they complete there, as any hold.
//   - Lost keys. A lease records its deadline in the state (h), so a lost
//     held ZSET pauses the schedule until every leased token has renewed,
//     as for any hold, and so does a lost runs ZSET (the state counts its
//     tokens); a report of tokens Redis no longer holds records nothing.
//     A Redis that loses everything (FLUSHALL, a restart without
//     persistence) starts afresh as above, and the tokens leased out at
//     the loss (at most N across the processes) may still be used: up to
//     3N in a window around the loss instead of 2N.
//   - SetLimit and Pause. A leased token is handed out at most 250ms
//     (and at most half the hold timeout) after its lease was asked for,
//     then given back unused: so within the 500ms of "Configuration" no
//     process admits from a lease granted under the old limits. A Pause in
//     this process gives the pool back and sends its callers to the normal
//     path; one in another process reaches this one's callers when its
//     leased tokens are used or 250ms old.
//   - Failures. A caller waiting for a lease whose context ends gets its
//     error at once, and the lease, when it comes, stays in the pool for
//     the next caller; the callers behind it whose cost the tokens in the
//     pool cover go at once, in order (those tokens waited for its
//     larger cost), as do those behind a caller that gives back the
//     tokens handed to it as its context ends. One with a deadline that waits in the pool behind
//     this process's callers on the normal path (see below) has it
//     decided as there, a round trip after it came: the pool asks Redis
//     (a probe that reserves nothing) and refuses it if its deadline is
//     no later than the earliest instant it could go (SPEC.md,
//     "Deadlines"); otherwise it waits as before. A failed lease sends the callers to the normal path
//     (its breaker and FailurePolicy); a failed report leaves its tokens
//     held in Redis until their deadline (OnError hears of it): it costs
//     tokens, never the window. Close gives back the tokens leased and not
//     used, bounded by WithTimeout.
//
// The block adapts: it starts at 1, doubles when callers found the pool
// empty and the lease came in full (demand per round trip), and halves
// when tokens come back unused (nobody took one for two ticks of the
// timer, and at least 10ms). A lease is asked for when the pool runs half empty, so that the
// next comes before the callers need it. The block is never more than
// the smallest N divided by the processes that leased in the last 2s
// (rxthrottle:{name}:lessees, a ZSET of one member per process), so a
// busy process cannot take the whole quota from a slow one: the slow
// one's lease, or its normal admission (which reserves, and which no
// lease overtakes), gets a token within about one window. What it costs
// in fairness: within a process, leased callers go in order, but across
// processes a lease serves its own callers first, up to its block, and a
// token may be held unused in a pool for up to three timer ticks (and at
// least 10ms) before it goes back (callers elsewhere wait for it
// meanwhile, as for any hold: the timer's period is the poll interval, a
// quarter of the smallest window, from 1ms up to 50ms).
//
// A token Acquire takes from a lease is held until its Release, with the
// lease's deadline; ReleaseN(0) gives it back, ReleaseN(u > 1) records
// u-1 more completions at the release (a debt). AcquireN of more than one
// token takes the normal path, and so does the first waiting caller when a
// lease grants fewer tokens than it needs (Redis has no more free now).
// While a caller of this process is on the normal path, the pool leases
// nothing, and the callers that come wait in the pool until the last one
// there is done, then lease again: a caller on the normal path reaches
// Redis a round trip or two after its arrival, and one after it could
// otherwise take a token first. The pool's waiters and this process's
// callers on the normal path are one order, SPEC.md's (priority, then the
// tenants' shares, then arrival): a caller keeps its place in it from its
// arrival until its departure comes, on the normal path too, and its
// tenant is charged then, as the normal path's own fair queue does. So a
// caller the order puts before one there goes there too, where it takes
// that one's departure or turn (see "Priorities" and "Fair shares"), and
// so do the pool's waiters the order puts before a caller sent there
// at its arrival (an AcquireN of another tenant or priority); one behind
// them all waits in the pool. With one priority and one tenant (the usual case)
// every caller that comes is last, and that costs nothing; otherwise
// each arrival, departure or withdrawal while callers are on the normal
// path walks the order, O(n) in the callers waiting. That order is kept
// in one place: the pool's waiters are the waiters of an
// internal/admission front whose planner is the pool (lease_queue.go),
// whose tokens are free for the head when the leased tokens in the pool
// cover its cost and Never while a lease is asked for, and a caller on the
// normal path is a waiter of the front it never frees, until its
// departure there. The normal path orders the callers sent there in its
// own fair queue, from their asks there: callers sent together (a Pause sends them all) reach it in the
// order their goroutines run. A Bucket's Stats count the callers
// waiting so, and WithMaxQueue bounds them with those on the normal path.
// Bucket.HoldTimeout says how long a token Acquire took from a lease is
// surely held (its lease deadline runs from the grant, up to 250ms before
// it was handed out). WithSpacing and WithConcurrency are
// refused with WithLease (leased tokens keep neither); NewKeyed does not
// take it. Bucket.Leased counts the callers admitted from leases.
//
// A lease is one member of the held ZSET with its count, and its use one
// member of runs for each run of tokens used together, whatever their
// number, so a leased admission costs Redis about a microsecond; the round
// trips are what leases save. The figures against go-redis/redis_rate
// (bench/run.sh redisprocs) are in BENCHMARKS.md, "redisstore: a lease as
// one member with a count" and "redisstore: leases no longer latch onto
// the normal path".
package redisstore
