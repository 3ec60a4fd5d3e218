// Package redisstore keeps rxthrottle's quotas in Redis, so that several
// processes (the replicas of a service calling one API key) share them.
//
// # What it offers
//
//   - Bucket: one shared sliding-window bucket (N per W, several limits at
//     once with rxthrottle.WithLimit). It implements rxthrottle.Limiter, so
//     rxthrottle.ThrottleWith and httpthrottle take it in place of the
//     in-memory rxthrottle.Bucket.
//   - Keyed: one shared schedule per key (user, token, host); it implements
//     rxthrottle.KeyedLimiter.
//   - GuardStore: a guard.Store, so that several servers enforce one
//     guard.Policy (fixed window and cool-down) together.
//
// # The model
//
// The schedule is SPEC.md's, across processes: the arrival order is the
// order in which Redis runs the admission script, and every time is read
// from Redis's clock (TIME inside the script), never from the clients, so
// clock skew between machines cannot break the window. One atomic Lua script
// per admission computes the departure
//
//	d = max(now, pauseUntil, d_(i-1) + S, max over limits of (c*_(i-N) + W))
//
// where c* are the completions of the earlier tokens in time order (a
// Wait's token completes at its departure; a held token when it is
// released, or at its lease deadline; SPEC.md, "Held tokens"), records it
// and returns it with Redis's now; the caller then waits d-now on its own
// clock (rxthrottle.WithClock) and honours its context. A caller that needs a token
// still held cannot have a time yet: it is told so, and asks again (see
// Bucket, "Held tokens"). Each admission is one round trip: EVALSHA,
// falling back to EVAL when Redis does not know the script (after a
// restart, a SCRIPT FLUSH, a failover to a replica that never loaded it),
// through go-redis's Script.Run. Group commit: the admissions of one
// process's callers that queue while a call is in flight go together in
// the next script run, in their arrival order, so the arrival order across
// processes is "batches in script order, admissions in batch order"; a
// caller alone never waits for a batch to fill. Acquire, WaitN and WithSpacing are the
// in-memory limiter's, across processes; SetLimit changes the limits of
// every process (see "Configuration").
//
// Times are kept to the microsecond (Redis's TIME resolution): a window is
// enforced as its length rounded up to a whole microsecond. The scripts
// count in Lua numbers, exact up to 2^53 µs: a window longer than that
// (about 285 years) is refused at construction, and a time later than 2^53
// µs after the Unix epoch (the year 2255, "never" to any caller alive
// today) saturates there, whether it comes from a long window or a Pause.
//
// # Redis keys, expiry and Redis Cluster
//
// A Bucket named "api" keeps three keys: rxthrottle:{api}:done, a ZSET of
// the completion of each token that a window can still reach;
// rxthrottle:{api}:held, a ZSET of the lease deadline of each token held;
// and rxthrottle:{api}:state, a HASH with the pause-until time, the newest
// departures and the admission counter (scripts.go describes them).
// With WithLease, rxthrottle:{api}:runs, a ZSET of the completions of
// leased tokens (a member for each run of tokens used together, with
// their count), and rxthrottle:{api}:lessees, a small ZSET of the
// processes that lease, which expires 2s after the latest lease.
// done is a compact ZSET (Redis's listpack, about 12 B a completion)
// while it holds up to 32 completions; a busier schedule's becomes a
// skiplist, faster to add to (about 1 KB, and 100 B a completion), until
// its keys expire. A
// Keyed limiter with prefix "users" keeps the same three keys per key,
// tagged {users:<key>}; a GuardStore keeps one HASH per key,
// rxthrottle:{<prefix>:<key>}:guard. The keys of a schedule share one
// expiry, a little after their state can no longer matter (the newest
// completion or lease deadline plus the largest window, or the end of a
// pause; plus another window, or a second if that is longer, so that the
// expiry moves at most about once a second); a guard key expires at the
// end of its window or block. Idle limiters cost nothing.
//
// All the keys one script touches share the hash tag between braces, so in
// Redis Cluster they map to one slot, as a cluster requires of a script's
// keys. Names and prefixes may not contain braces; the keys passed to Keyed
// and GuardStore may hold anything (see keys.go for why they cannot split a
// limiter across slots). The tests run the limiters on a one-node cluster,
// which refuses any script whose keys span slots (CROSSSLOT), and CI runs
// the whole suite a second time over a cluster of three masters with a
// replica each (see "Redis Cluster and failover").
//
// # Cancellation and deadlines
//
// Whatever the moment a caller gives up, the shared schedule is as if it
// had never arrived (SPEC.md, "Cancellation"): FIFO is derived from the
// reservations still live in Redis, not kept as one newest departure, so
// a withdrawn reservation holds nobody back, whichever it was. A Wait or
// Acquire whose context ends before its departure withdraws its
// reservation; one whose context ends while its script is in flight
// returns at once, and its admission is withdrawn when the answer comes
// (the call is never cut short: group.go), as is one whose answer comes
// back after its context ended. A caller's context deadline goes to the
// script, which never reserves past it: a caller that cannot go by its
// deadline holds no reservation and waits, unreserved, until its context
// ends or this process frees a token (then it asks again); one whose
// deadline is no later than the earliest instant it could possibly go is
// refused at once with an error wrapping rxthrottle.ErrDeadline and
// context.DeadlineExceeded (SPEC.md, "Deadlines"). So callers with short
// deadlines cannot starve the quota of the others. The callers that
// reserved before a withdrawal keep their times (their replies are out):
// only the next arrivals see it (but a caller of higher priority takes
// the times of this process's callers of lower priority that have not
// gone: see "Priorities"). The spacing may count from a withdrawn
// departure, by at most S.
//
// # Priorities
//
// rxthrottle.WithPriority orders the callers of one process, per schedule
// (a Bucket, a key of a Keyed limiter), as SPEC.md's "Priorities" does:
// the callers waiting for the next script run (group commit) go in it by
// priority, then arrival; and a caller that has its departure from the
// script but has not reached it is still waiting, so a caller of higher
// priority that asks meanwhile takes its place (the place a script run
// in flight as it asks gives included, once that answer comes; fair.go
// does it for priorities and tenants alike): in one script run, the
// reservations of the callers of lower priority not yet gone are
// withdrawn, the new caller is admitted, and they ask again behind it, in
// their order (a caller asking again is not refused by its deadline: that
// is decided at arrival; one that can no longer go by it waits unreserved,
// as any). A caller that has gone keeps its token. The callers blocked by
// held tokens queue in their order behind the head of their line, which
// asks Redis again when a token may be free; a caller of higher priority
// takes its place (the head then goes first of its priority) at once if
// it arrives while the head sleeps between its asks, or as the head's
// answer says it is blocked still if it arrives during the head's round
// trip (an answer that admits the head stands: the head asked first).
// Across processes the order is the scripts', whatever the priorities.
// With WithLease, the pool
// orders its waiters so too, and one of a higher priority than a caller
// of this process on the normal path goes there as well, ahead of it (see
// "Leases").
//
// # Fair shares
//
// rxthrottle.WithTenant (SPEC.md, "Fair shares") orders, in one process
// and per schedule, the callers that wait in this process: those waiting
// for the window, those blocked by held tokens behind the head of their
// line, those over the adaptive cap at this process's front, and the
// waiters of a lease's pool. The script hands each caller its departure
// when it asks; a caller stays in its schedule's fair queue until that
// departure comes, and a caller arriving later that the fair queue puts
// first takes the departures of the callers behind it: their
// reservations are withdrawn in the next script run, ahead of its
// admission, and they ask again behind it, as a caller of higher
// priority makes them do. So a light tenant's callers go within a window
// or two of arriving, not behind a heavy tenant's backlog; the cost is a
// withdrawal and an admission asked again in Redis for each caller a
// later one goes before (none with one tenant and one priority, where
// every caller is last in the queue). Across processes the order is the
// scripts': a second process sharing the key has its callers admitted as
// its asks reach Redis, whatever the tenants of either process, and no
// tenant of one process is charged for the other's calls.
//
// # Queue bound
//
// rxthrottle.WithMaxQueue(q) bounds the callers of this process known to
// wait on a schedule (a Bucket, a key of a Keyed limiter; with WithLease,
// the pool's waiters with them: see "Leases"). A caller is known to wait
// from the moment it learns it does until its call returns: over the
// adaptive cap, behind the callers blocked by held tokens, or from the
// answer that gives it a departure ahead, blocks it, or finds it too late
// for its deadline; OnWait hears of it then, once. A caller the script
// admits at once is never counted, and OnWait never hears of it. At the
// bound, a caller that would wait behind blocked callers or over the cap
// is refused at once (ErrQueueFull); any other asks the script for an
// admission at once only, and is refused if it would wait (SPEC.md,
// "Queue bound": a caller that may go at once is never refused). The
// schedule's window, the group commit's admission front
// (internal/admission's Asking), keeps the count and decides.
//
// # Failures
//
// Each call is bounded by WithTimeout, by default DefaultTimeout (500ms),
// which bounds the whole call (dial, retries, socket I/O) with any
// go-redis client: a client without ContextTimeoutEnabled ignores the
// deadline on the socket, and the limiter then stops waiting at the bound
// while the call goes on in the background (its admission, if it makes
// one, is withdrawn). A caller's context bounds it too.
// When a call fails, the OnError hook hears of it, then the FailurePolicy
// decides: FailClosed (the default) returns a *StoreError that wraps
// ErrStoreUnavailable and the client's error and names the key and the
// operation; FailOpen lets the caller go; FallbackLocal makes it wait on an
// in-memory bucket of this process with the same limits. Pause has no error
// to return: a failed pause goes to OnError (and, with FallbackLocal, still
// pauses the local bucket). Nothing panics and no failure is silent.
//
// A circuit breaker keeps an outage cheap (WithRetryBackoff): after a
// failed call nothing goes to Redis for a back-off period (100ms at first,
// doubling up to 2s), and every policy answers at once (FailClosed with an
// error wrapping ErrCircuitOpen); then one caller at a time probes Redis,
// and when Redis answers every caller is back on it. Without it each call
// would pay the timeout. The first call of an outage fails after at most
// the timeout (DefaultTimeout: 500ms; it took go-redis's dial retries,
// about 1.7 s with its defaults, before).
//
// # Restarts, eviction and persistence
//
// The schedule lives only in Redis. A Redis that loses its data (a restart
// without persistence, a failover to a replica that had not received the
// latest writes, a FLUSHALL) starts every quota afresh: the next callers
// may go at once, so up to twice the quota can fall in one window around
// the loss. To keep quotas across a restart, run Redis with the
// append-only file and appendfsync always (every admission is on disk
// before its caller hears of it; appendfsync everysec may lose the last
// second); RDB snapshots alone lose everything since the last one. With
// replication, a failover keeps the schedule only as far as the replica
// had it: see "Redis Cluster and failover" for what that does to the
// window, measured, and WithReplicaAck.
//
// A server under maxmemory with an evicting maxmemory-policy (allkeys-*,
// or volatile-*, since the limiters' keys carry expiries) may drop a
// schedule under memory pressure, with the same effect. Every limiter
// checks the policy (CONFIG GET maxmemory*) on its first call that Redis
// answers and reports such a server once to OnError, with an error
// wrapping ErrEvictionPolicy; it keeps working. A server that refuses
// CONFIG (managed services often rename it) is not reported. Call
// CheckServer at start-up to refuse such a server instead; use
// maxmemory-policy noeviction for quotas.
//
// # Adaptive concurrency
//
// rxthrottle.WithAdaptiveConcurrency(min, max) caps the holds of this
// process open at once (per key for a Keyed limiter), with a cap that
// moves from the latencies of the holds that complete, by the in-memory
// limiters' rule (SPEC.md, "Adaptive concurrency"). The cap on calls in
// flight is a concern of this process's front, not of Redis: each
// process learns its own from the latencies its own calls see, and none
// stores it. A caller over the cap waits at this process's front
// (internal/admission) in its place, priorities and tenants as ever, and
// is never refused for it (WithMaxQueue counts it among the waiters); a
// Wait behind it waits its turn; Allow does not go before it. A hold's
// place is taken from its caller's turn at the front until its Release,
// Cancel or ReleaseN, or its hold timeout from its departure on the local
// clock; its latency runs from its departure to its release. A caller let
// past the cap then asks the script for its departure as a new arrival of
// its schedule's window: behind the callers of its priority already
// asking there, whose departures the script gave first (the window grants
// them in its order: internal/admission's doc). Stats
// reports the cap of the moment. WithConcurrency, a cap across every
// process kept in Redis, is the one to use for a server's limit on
// concurrent calls per key; the two cannot be combined, and WithLease
// does not take this one (leased tokens do not count holds).
//
// # Configuration
//
// A quota's configuration (its limits, spacing, hold timeout and
// concurrency cap) lives in
// Redis with the quota: the first process that uses it stores its own
// (rxthrottle:{name}:conf for a Bucket, rxthrottle:{prefix}:keyconf for a
// Keyed limiter; they do not expire: DEL one to let the next process store
// its own), and SetLimit in any process changes it for all. Every
// admission runs under the stored configuration read at most 500ms before
// it on Redis's clock (a process reads it again every 250ms while it
// admits, or while a caller sleeps on its departure), and a Bucket's SetLimit marks the schedule so that no admission
// after it, in any process, runs under the old limits; a Keyed limiter's
// key follows at once from its first admission by a process that has the
// new limits, and in any case within the 500ms (on a Redis Cluster, plus
// the skew between the clocks of the two nodes). So two schedules never
// run under one name past that bound. A caller given its departure under
// the old limits that has not reached it yet, asleep until it, is planned
// again (SPEC.md, "Changing limits"): once its process has the new limits
// (its own SetLimit, or a read of another's: a process also reads the
// configuration every 250ms while any of its callers sleeps on a
// departure, though it admits nothing else), its reservation is withdrawn
// and it asks again under them, in its place among this process's
// callers (behind what other processes admitted meanwhile: across
// processes the order is the scripts'), or fails with an error wrapping
// rxthrottle.ErrInvalidCost if its cost is more than their smallest N. So
// a caller that departs 250ms and a round trip after another process's
// SetLimit departs under the new limits, whatever its process does
// meanwhile; one whose departure comes before goes as it was planned, as
// do those of a process that cannot read the configuration (Redis
// fails). A process built with another
// configuration follows the stored one (OnError hears of it once) or, with
// WithStrictConfig, refuses to run, with an error wrapping
// ErrConfigMismatch that says what differs.
//
// A key's own limits (rxthrottle.WithKeyLimits: a tier) come from a
// function, which cannot be stored; so each key's schedule records the
// limits it runs under, in its state hash, with the configuration's
// version: the first admission under a version records its limits, and an
// admission with other ones under that version admits nothing, and makes
// its process follow the recorded ones for the key (for 500ms, then it
// asks again; OnError hears once) or, with WithStrictConfig, fail the
// call with ErrConfigMismatch. So a key runs one schedule across processes
// whose functions disagree, or that have none; after a SetLimit (a new
// version), or once the key's state expired or was lost, the next
// admission records its limits anew, counting the completions the old
// ones left in the window, so that no window holds more than the larger
// of the two limits allow.
package redisstore
