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
// its schedule's window from its ask (its arrival, whose place in the
// front is its ask's in the batches) until its departure comes. The window's
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
// departure, and FIFOFrom and Waiter.Seq walk it from a cursor.
//
// The window's front decides the grants, not the arrivals: the group
// commit never calls Decide. The queue bound and OnWait are the store's
// answer's (take.go): at the bound a caller asks Redis and goes only at
// once (request.allowOnly: SPEC.md, "Queue bound", lets a caller that may
// go at once go), the bound counts the callers known to wait (OnWait heard
// of them), and OnWait follows the answer that makes a caller wait (a
// departure ahead, held tokens, a deadline it cannot meet), not its push.
//
// The window's front is also where a batch takes the waiters' asks from
// (group_batch.go): a Waiter links to the ask the planner sends for it
// (Waiter.Ask, a pending; a caller bumped keeps its Waiter and asks with a
// new pending, a run under a stale configuration asks again with a new
// Waiter), and the window keeps which asks have no answer yet (queued:
// not in flight, no departure, not answered and asking again) and how
// many. A batch is the ends first, then the waiters without an answer in
// the front's order as it is taken (All; while FIFO, from a cursor at the
// first of them, FIFOFrom, which walks nothing before it and allocates
// nothing), Allow's admissions among them, up to maxBatch. The queue
// beside the front (flight.queue) holds only the ends and Allow's
// admissions; the next leader is the first end with a caller, else the
// first ask without an answer, else the first Allow, and it stays in its
// place; run's queue of withdrawals alone and landedLocked read the ends,
// the Allows and the asks without an answer together. The rules it keeps,
// decided (2026-12-04) so that this is one meaning on every limiter:
//
//   - a batch reads the front's order as it is taken, as the root's Bucket
//     reads its queue at each grant, not an order last sorted: a tenant's
//     caller giving up in between gives the next of its tenant an earlier
//     finish (tenants a of weight 2 and b, All a1 b1 a2 a3 b2: a1 giving
//     up puts a2 before b1; TestBatchReadsTheFrontAsTaken);
//   - an Allow goes where priority, then arrival, put it, whatever the
//     tenants: behind the asks and Allows of a higher priority and those
//     of its priority queued before it (numbered as they enter the queue:
//     pending.queued, so one asking again re-enters behind it), ahead of
//     the later ones; with the asks in the front's order, it goes right
//     behind the last of those (placeAllows;
//     TestAllowGoesByPriorityThenArrival), as the root's Allow, which
//     "never jumps the queue", goes only with nobody waiting at its
//     arrival;
//   - the ends go first, the withdrawals of the departures a caller takes
//     (a bump) among them, so the caller that takes them is scheduled
//     without them (TestBumpWithdrawalsGoFirst).
//
// What is left: a Decide for a planner that answers after a round trip,
// which would take the bound and OnWait from take.go. It needs, read from
// the code (2026-12-04):
//
//   - a verdict of its own: such a front cannot tell Go from Wait at
//     arrival (FreeAt is Never until the answer), so Decide would answer
//     "ask the store" (Push, then the answer decides), and at the bound
//     "ask, going only at once" (request.allowOnly) where Full refuses:
//     SPEC.md, "Queue bound", lets a caller that may go at once go.
//   - the count the bound reads under the window's lock: today it is the
//     callers OnWait heard of (taker.tellWait, counted in line.go's lines
//     under their own lock), wherever they wait: for a departure in the
//     window, in the line of callers blocked by held tokens, at the
//     adaptive cap (take_gate.go), or unreserved after a late answer.
//   - OnWait queued at the answer that makes a caller wait (a departure
//     ahead, blocked, late), not at Push: a caller the script admits at
//     once never hears it, and one told at push would be (Calls queue
//     OnWait at Push for the in-memory fronts).
//
// This package is internal to rxthrottle's module tree: the root package
// and the nested redisstore module may import it; users never see it.
package admission
