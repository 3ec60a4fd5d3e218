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
// Requeue), and the group commit's
// callers waiting for the window (group_planner.go): a caller is a waiter
// of its schedule's window from its ask until its departure comes, and is
// served as its departure comes (Front.Serve, out of turn: the script,
// not Dispatch, decided when each goes) or withdrawn (Front.Cancel); the
// window's planner keeps the departures the script gave and forgets each
// as its waiter leaves (Left); All and FIFO show the order that decides
// who takes whose departure (fair.go).
//
// What remains of the group commit as a planner: the window holds its call
// in flight, but the operations queued for the next script run, its leader
// and the run (group.go, group_run.go) keep an order of their own
// (priority, then the window's: sortFair), and the window's planner
// decides nothing (its FreeAt says Never, and Dispatch is never called).
// To come: FreeAt says Never for a head with no answer and starts a script
// run for the heads the front shows (All, up to maxBatch; the reservations
// of the waiters behind the first head without one are withdrawn ahead of
// it, which is fair.go's rule), the answer's arrival calls Dispatch, Grant
// hands the caller the departure the store reserved, and a caller that
// gives up withdraws it through the planner. Three points that design has
// to settle, which the first steps showed: (1) WithMaxQueue: Decide's
// Full, with a FreeAt of Never, would refuse at the bound a caller the
// store could let go at once (SPEC.md, "Queue bound"); for a store's
// planner Full means "ask, and go only at once" (take.go's allowOnly), and
// the bound counts the callers known to wait (OnWait heard of them), not
// the front's waiters, some of which the answer lets go at once. (2) So
// OnWait follows the answer that makes a caller wait (a departure ahead,
// held tokens, a deadline it cannot meet), not Push. (3) A waiter granted
// at the answer leaves the queue whose order decides who takes whose
// departure (fair.go); granted at its departure instead (the head's FreeAt
// is the departure its answer gave, and the front's timer wakes it), it
// stays, and Front.Serve out of turn is no longer needed: the script's
// departures follow the script's order (batch.lua: none before the latest
// live departure), so Dispatch in order keeps the schedule, but for the
// difference between two answers' latencies (each answer's instants are
// read on the local clock as it arrives), and the rule of taker.sleepUntil
// for a departure that met its deadline as the answer gave it moves to the
// front's timer.
//
// This package is internal to rxthrottle's module tree: the root package
// and the nested redisstore module may import it; users never see it.
package admission
