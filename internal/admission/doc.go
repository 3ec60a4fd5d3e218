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
// for the next script run (flight.queue, group.go: the ends, Allow's
// admissions and the waiters' asks) keep an order beside the front's,
// sorted in the front's order (sortFair, fair.go) at each arrival and
// after each run when it is not FIFO. Taking the waiters' asks from the
// front instead (a batch: the ends, then the front's waiters without an
// answer in All's order, up to maxBatch, Allow's admissions among them)
// needs, read from the code:
//
//   - a waiter's ask: the front holds a Waiter, a batch sends a pending.
//     A bumped caller keeps its Waiter but asks with a new pending
//     (departure.again); a run under a stale configuration asks again
//     with a new Waiter. Waiter has no field for the planner's ask (one
//     here, or a map per window).
//   - which waiters have no answer (queued: not in flight, no departure,
//     not asking again): the window would keep that per waiter; the front
//     does not. A waiter holding a departure stays in the front until it
//     comes, so a batch read from All walks those too, and All allocates
//     and, with several tenants, serves a copy of their finishes
//     (fairq's aheadIn), per batch, where FIFO today walks nothing (an
//     arrival goes last). It needs a cursor (the first waiter without an
//     answer) while FIFO, and All only when not.
//   - Allow's place: done, by the second rule (below). An Allow goes
//     behind the asks and Allows of a higher priority and those of its
//     priority queued before it (numbered as they enter the queue:
//     pending.queued, so one asking again re-enters behind it, as with
//     one tenant), ahead of the later ones, whatever the tenants
//     (placeAllows, fair.go; TestAllowGoesByPriorityThenArrival). It
//     kept its slot among the asks as sortFair moved them, so it went
//     behind the first k asks in the front's order. With the batch
//     taken from the front, the Allows queued are the planner's: each
//     goes behind its last of those asks in the front's order.
//   - when the order is read: done. A batch reads the front's order as
//     it is taken (takeBatchLocked sorts the queue then, after the
//     arrivals' and the runs' sorts; nothing while FIFO), not the queue
//     as last sorted: a tenant's caller giving up in between gives the
//     next of its tenant an earlier finish (tenants a of weight 2 and b,
//     All a1 b1 a2 a3 b2: a1 giving up puts a2 before b1;
//     TestBatchReadsTheFrontAsTaken). With the batch taken from the
//     front, that sort goes.
//   - the lead: the next leader is the first queued operation with a
//     caller (run), taken out and put back first of its priority
//     (takeBatchLocked); the election, run's queue of withdrawals alone
//     and landedLocked's empty queue then read the ends, Allow's
//     admissions and the asks without an answer together.
//
// The two rules, decided (2026-12-04) so that the step is one meaning on
// every limiter rather than a copy of today's: a batch reads the front's
// order as it is taken (All, or the FIFO cursor), as the root's Bucket
// reads its queue at each grant, and not the queue as last sorted (made
// so on the second queue first: redisstore's takeBatchLocked); and an
// Allow goes where priority, then arrival, put it, whatever the tenants:
// behind the asks of its priority or higher queued at its arrival and
// those of a higher priority that come later, ahead of the rest, as the
// root's Allow, which "never jumps the queue", goes only with nobody
// waiting at its arrival. Both change an order only with several tenants (the example
// above); the step brings each with a test that fails before it and a
// CHANGELOG line (TestBatchReadsTheFrontAsTaken and
// TestAllowGoesByPriorityThenArrival, on the second queue first).
//
// And a Decide for a planner that answers after a round trip, which would
// take the bound and OnWait from take.go.
//
// This package is internal to rxthrottle's module tree: the root package
// and the nested redisstore module may import it; users never see it.
package admission
