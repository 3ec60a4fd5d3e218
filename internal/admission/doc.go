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
//     Push and OnAdmit at Grant; a front whose planner answers after a
//     round trip, Asking, decides arrivals with Asking.DecideAsk and
//     queues OnWait at the answer that makes a caller wait);
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
// The window's front is an Asking front: it decides the arrivals too,
// for a planner that cannot tell Go from Wait at arrival (FreeAt is Never
// until the store answers, Earliest Unknown), and keeps the count the
// queue bound reads. Asking.DecideAsk answers Wait behind callers known
// to wait with no answer to come (redisstore's line of callers blocked by
// held tokens, its adaptive cap), Full there at the bound; else Ask (the
// store's answer decides) or, at the bound, AskAtOnce
// (request.allowOnly: the caller goes only if the script admits it at
// once, else it is refused: SPEC.md, "Queue bound", lets a caller that
// may go at once go). The count is of the callers known to wait (Asker:
// one per caller, across its asks), wherever they wait: at the adaptive
// cap, in the line of blocked callers, for a departure in the window, or
// unreserved after a late answer; each from the decision or the answer
// that makes it wait until it is done, under the window's lock
// (group.mu; redisstore's take_wait.go), the window kept while it counts
// anyone. OnWait is queued (Asker's Calls) when the caller is counted,
// not at its Push, and made on the caller's goroutine once the lock is
// released: a caller the script admits at once never hears it. Decided
// (2026-12-05) so that the bound keeps its one meaning: the line of
// blocked callers keeps its lock (lines.mu), taken inside the window's
// (group.mu) at an arrival, so that a caller decides, joins the line and
// is counted at once (it was three steps under two locks, between which
// two arrivals at the bound less one could both pass); the line and the
// window are one schedule's (its first key), so no count crosses
// schedules. The answer that makes a caller wait is read on its own
// goroutine (redisstore's taker), which counts it then: counting it in
// the script run's settling, under the same lock, would call its OnWait
// on the goroutine of the batch's leader, where a hook that blocks holds
// back the next script run and the caller may go before its OnWait has
// returned; redisstore calls it on the caller's goroutine (its Bucket's
// doc).
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
// The front's refusals read alike on every limiter (Refusals: the queue
// bound, the deadline at arrival, a cost no limit can serve) and wrap the
// same sentinels, which the root exports as rxthrottle.ErrQueueFull,
// ErrDeadline and ErrInvalidCost; only the limiter's name, and whose
// callers the queue bound counts, differ.
//
// This package is internal to rxthrottle's module tree: the root package
// and the nested redisstore module may import it; users never see it.
package admission
