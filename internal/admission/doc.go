// Package admission is the admission front of rxthrottle's limiters: the
// part that decides who goes and when a caller waits, refuses or gives up,
// apart from how tokens are counted. A limiter is a front over a planner:
//
//   - the front owns the callers: the queue in SPEC.md's order (priority
//     first, then arrival; Queue), the one timer however many wait
//     (Timer), the decisions at arrival (go now, refused by a deadline,
//     refused by the queue bound, or queued: Front.Decide), the grants at
//     the head of the queue (Front.Dispatch), cancellation (Front.Cancel),
//     the counters of Stats (Counters) and the hook calls made once the
//     limiter's lock is released (Calls: the limiter queues OnWait at
//     Push and OnAdmit at Grant);
//   - the planner owns the tokens: when a caller of cost n can go, what a
//     grant records, and the lower bound a deadline is checked against
//     (Planner). The in-memory planner is rxthrottle.Bucket over its
//     sliding window (slidingwindow.go); a shared store's planner answers
//     from the store (see Planner for how a planner that needs a round
//     trip fits).
//
// Every method that takes a Planner runs under the limiter's lock, which
// the front does not know: the limiter holds it and passes itself.
// Nothing here reads a clock: instants are int64 offsets the limiter
// reads under its lock and passes in (SPEC.md, "On the real clock").
//
// Four of redisstore's queues are fronts: WithAdaptiveConcurrency's cap
// (capgate.go, a planner of places), WithLease's pool (lease_queue.go, a
// caching planner in front of the store: its tokens are free for the head
// when the leased tokens in the pool cover its cost, Never while a lease
// is asked for; Grant hands the head its leased tokens, a caller that
// gives up is withdrawn, Cancel, and one a probe of the store finds too
// late for its deadline fails where it stands, Fail; a caller the pool
// sends to the store's own path keeps its place in the order, as a waiter
// of a kind the planner never frees, until its departure there, Serve,
// which charges its tenant, so the pool's waiters and its callers on that
// path are one order, with Cost the tokens the waiters ask a lease for),
// the line of callers blocked by held tokens (line.go, a planner of one
// turn: the head's, which asks Redis again; a head that gives way to a
// waiter of a higher priority, Next, waits again first of its priority,
// Requeue), and the group commit's callers waiting for the window
// (group_planner.go), a planner that answers after a round trip. A caller of Wait or Acquire is a waiter of
// its schedule's window from its ask (its arrival, which numbers it for
// the batches: request.seq) until its departure comes. The window's
// planner keeps the departures the script gave: FreeAt is the head's (on
// the limiter's clock, the answer's arrival plus the delay it gave), or
// Never while the head's admission is queued, in flight or asked again,
// so Dispatch grants the departures in the front's order and the front's
// one timer wakes the head, however many wait; a caller that gives up is
// withdrawn (Front.Cancel) and the front grants the callers behind it
// whose departure has come. The script's departures follow the front's
// order (the batches take the waiters in it, batch.lua gives none before
// the latest live departure, and a caller the front puts before waiters
// given a departure takes their places: fair.go), but for the difference
// between two answers' latencies, by which a caller may go after its
// departure as its answer gave it, never before. A caller whose deadline
// passes while it waits for a departure that met it as the answer gave it
// still waits for the grant (take_depart.go). One exception to the order:
// a caller the script admitted at once goes at once, wherever it stands
// (Front.Serve): its admission was the store's arrival, made before the
// callers still asking here reached Redis (SPEC.md, "Shared (Redis)
// store"). All and FIFO show the order that decides who takes whose
// departure.
//
// The window's front decides the grants, not the arrivals: the group
// commit never calls Decide. The queue bound and OnWait are the store's
// answer's (take.go): at the bound a caller asks Redis and goes only at
// once (request.allowOnly: SPEC.md, "Queue bound", lets a caller that may
// go at once go), the bound counts the callers known to wait (OnWait heard
// of them), and OnWait follows the answer that makes a caller wait (a
// departure ahead, held tokens, a deadline it cannot meet), not its push.
// What is left of the group commit as a planner: the operations queued
// for the next script run (flight.queue: the ends, Allow's admissions and
// the waiters' asks, group.go) keep an order beside the front's, kept in
// step by sorting them in the front's order (sortFair) when it is not
// FIFO, where a batch could be the front's waiters without an answer, in
// All's order, up to maxBatch, behind the ends; and a Decide for a
// planner that answers after a round trip, which would take the bound and
// OnWait from take.go.
//
// This package is internal to rxthrottle's module tree: the root package
// and the nested redisstore module may import it; users never see it.
package admission
