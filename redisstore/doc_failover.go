// # Redis Cluster and failover
//
// Give NewBucket or NewKeyed a *redis.ClusterClient: each schedule lives
// in one slot, so on one master, and its replica takes over when that
// master fails. The failover suite (failover_test.go; its figures in
// BENCHMARKS.md, "redisstore over a Redis Cluster") runs three processes
// calling Wait on one schedule, over a cluster of three masters with a
// replica each and under Sentinel, and found:
//
//   - A manual failover (CLUSTER FAILOVER on the replica) loses nothing:
//     the master stops its clients until the replica has caught up.
//   - A master killed with its replica in sync lost nothing in any run
//     (Redis writes to its replicas in the same turn of its event loop as
//     the replies); the slot is unavailable for the node timeout, the
//     election and the breaker's back-off, during which the FailurePolicy
//     answers.
//   - A master killed while its replica lagged loses the newest
//     admissions, those the replica never heard of: the promoted replica
//     admits again in their place, and a window that spans the kill holds
//     at most N plus the admissions lost (the suite asserts it).
//
// Redis replicates asynchronously, so the loss bound is what the replica
// lags by: the admissions made in the replication delay (sub-millisecond
// on a healthy link, as long as a partition lasts otherwise), bounded by
// min-replicas-max-lag if the master is configured with
// min-replicas-to-write. For a quota that must hold across a failover,
// WithReplicaAck(1, timeout) sends WAIT 1 after each admission, on the
// script's own connection: a caller goes only once a replica has its
// admission, and an admission no replica acknowledges in time fails (a
// *StoreError wrapping ErrNotReplicated, for the FailurePolicy). With it
// the suite lost nothing and never exceeded N in a window, the callers
// being refused while the replica lagged; it costs a round trip from the
// master to its replica per batch of admissions (BENCHMARKS.md), and a
// master left without a replica admits nothing until one is back. A
// stored configuration (SetLimit) is written like an admission, and a
// failover can lose it the same way; WithReplicaAck does not wait for it.
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
