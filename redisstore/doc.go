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
// only the next arrivals see it. The spacing may count from a withdrawn
// departure, by at most S.
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
// admits), and a Bucket's SetLimit marks the schedule so that no admission
// after it, in any process, runs under the old limits; a Keyed limiter's
// key follows at once from its first admission by a process that has the
// new limits, and in any case within the 500ms (on a Redis Cluster, plus
// the skew between the clocks of the two nodes). So two schedules never
// run under one name past that bound. A process built with another
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
//
// # Leases
//
// Each admission above is a round trip. WithLease(max) makes a Bucket
// lease tokens instead: one script run admits a block of up to max tokens
// (DefaultLeaseBlock, 256, by default) as held tokens (SPEC.md, "Held
// tokens") with Redis's TIME T_r, and the process hands them to its own
// callers of Wait, WaitN, Acquire, Allow and AllowN with no round trip, in
// their order (and priority) as the in-memory limiter does. What it keeps:
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
//     the next caller. A failed lease sends the callers to the normal path
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
// token, and every caller while one of this process waits on the normal
// path, take the normal path. When a lease grants fewer tokens than the
// first waiting caller needs (Redis has no more free now), that caller
// alone takes the normal path, and the callers behind it (and those who
// come while it is there) wait in the pool until it is done: it reaches
// Redis a round trip or two after its arrival, and a caller after it
// could otherwise take a token first. A Bucket's Stats count the callers
// waiting so, and WithMaxQueue bounds them with those on the normal path.
// Bucket.HoldTimeout says how long a token Acquire took from a lease is
// surely held (its lease deadline runs from the grant, up to 250ms before
// it was handed out). WithSpacing and WithConcurrency are
// refused with WithLease (leased tokens keep neither); NewKeyed does not
// take it. Bucket.Leased counts the callers admitted from leases.
//
// Measured against go-redis/redis_rate's Allow on one key (bench/run.sh
// -r 6 redisprocs, 6 interleaved rounds on a loaded 2-core machine,
// BENCHMARKS.md, "redisstore: a lease as one member with a count"), the
// median ratio of admissions per second, with a window of 1ms and of 1s:
// 17.4x and 23.8x with one process of one goroutine (0.38x without
// leases), 10.2x and 13.0x with one process of 8 (0.90x), 4.9x and 6.2x
// with 4 processes of 8 (0.82x). A lease is one member of the held ZSET
// with its count, and its use one member of runs for each run of tokens
// used together, whatever their number, so a leased admission costs Redis
// under a microsecond (0.3-2.5µs); the round trips are what leases save.
//
// # Redis Cluster and failover
//
// Give NewBucket or NewKeyed a *redis.ClusterClient: each schedule lives
// in one slot, so on one master, and its replica takes over when that
// master fails. What a failover does to the window was measured by the
// failover suite (failover_test.go; figures in BENCHMARKS.md): three
// processes, two Buckets each, calling Wait on one schedule of 30 per 3s
// (and one per 20ms, so that admissions flow throughout) on a cluster of
// three masters with a replica each, node timeout 1s, on loopback:
//
//   - A manual failover (CLUSTER FAILOVER on the replica) loses nothing
//     (checked in every run): the master stops its clients until the
//     replica has caught up.
//   - A master killed (SIGKILL) with its replica in sync lost nothing in
//     any run (Redis writes to its replicas in the same turn of its event
//     loop as the replies); the slot was unavailable for 2-4s (the node
//     timeout, the election, and the breaker's back-off), during which
//     the FailurePolicy answers.
//   - A master killed while its replica lagged (frozen behind 48 MB of
//     other writes for the last fraction of a second: a partition, or a
//     slow replica) lost 2-4 admissions, the newest ones: the promoted
//     replica never heard of them and admitted again in their place (with
//     their ids, and often their very departures), and the most
//     departures in one 3s window were 32-34 for a quota of 30, each time
//     at most 30 plus the admissions lost (the suite asserts it): the
//     window bends by what was lost, and only in a window that spans the
//     kill (a failover that takes longer than the window hides it).
//
// Redis replicates asynchronously, so the loss bound is what the replica
// lags by: the admissions made in the replication delay (sub-millisecond
// on a healthy link, as long as a partition lasts otherwise), bounded by
// min-replicas-max-lag if the master is configured with
// min-replicas-to-write. For a quota that must hold across a failover,
// WithReplicaAck(1, timeout) sends WAIT 1 after each admission, on the
// script's own connection: a caller goes only once a replica has its
// admission, and an admission no replica acknowledges in time fails (a
// *StoreError wrapping ErrNotReplicated, for the FailurePolicy). Measured
// in the same run with the lagging replica: no admission lost and at most
// 30 in a window, every time; the callers were refused while the replica
// lagged. It costs a round trip from the master to its replica per batch
// of admissions: Wait on loopback went from 214 to 326 µs for one caller
// alone (+52%) and from 64 to 89 µs a call with 8 goroutines (+39%; 6
// interleaved rounds on a loaded 2-core machine, BENCHMARKS.md), and a
// master left without a replica admits nothing until one is back. A
// stored configuration (SetLimit) is
// written like an admission, and a failover can lose it the same way;
// WithReplicaAck does not wait for it.
//
// The same suite runs under Sentinel (one master, one replica, one
// Sentinel with down-after 500ms, go-redis's failover client), with the
// same results: nothing lost with the replica in sync; with it lagging,
// 0-4 admissions lost and the window bent by at most as many; nothing
// lost with WithReplicaAck.
//
// A cluster client finds a promoted replica on a MOVED, or when it
// reloads its map of the slots: go-redis (v9) does that on a MOVED, after
// its retries reach another node, and every ClusterStateReloadInterval
// (60s by default); a master that died answers nothing, and a short call
// timeout leaves no room for those retries. So the limiters ask a
// ClusterClient to reload its map after every failed script (at most one
// reload per 200ms, in the background): without that, a process kept
// calling the dead master for up to a minute after its replica took over.
package redisstore
