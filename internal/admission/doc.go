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
// Two of redisstore's queues are fronts already: WithAdaptiveConcurrency's
// cap (capgate.go, a planner of places) and the line of callers blocked
// by held tokens (line.go, a planner of one turn: the head's, which asks
// Redis again; a head that gives way to a waiter of a higher priority,
// Next, waits again first of its priority, Requeue). The group commit's
// fair queue of the callers waiting for the window (fair.go) is a Queue:
// a caller stays in it from its ask until its departure comes, each
// served as its own comes (Queue.Serve, out of turn), and All and FIFO
// show the order that decides who takes whose departure.
//
// A store's planner (redisstore's group commit, to come) sits behind the
// same front and keeps its scripts: its FreeAt says Never and starts a
// group commit for the heads the front shows it (Dispatch's head, in the
// queue's order), the answer's arrival calls Dispatch again, and Grant
// hands the caller the departure the store reserved (the caller then
// sleeps until it, as today; a caller that gives up withdraws it through
// the planner). Its callers waiting for the window are then waiters of
// the front, as those blocked by held tokens are, not the group's own
// queue (group.go, fair.go); WithMaxQueue is Decide's bound, deadlines
// Decide's Late (Earliest from the last answer, or Unknown and the
// store's refusal through Unservable), and OnWait, OnAdmit and the
// counters follow Push, Grant and Left as for the Bucket.
//
// This package is internal to rxthrottle's module tree: the root package
// and the nested redisstore module may import it; users never see it.
package admission
