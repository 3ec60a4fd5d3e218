// Package learn is the learning of httpthrottle's Transport
// (WithLearnLimits): one table-driven reader of every quota header dialect
// (Read, RetryAfter), and the Learner that keeps schedules of the quotas
// read, finds a rate from refusals when nothing is published, and spreads
// requests for servers that estimate. Its core takes the time of each
// answer as an argument; the Transport's clock is used only for its
// Buckets and boundary timers.
//
// Files by job: header.go, dialects.go, ietf.go, fields.go, seconds.go
// (reading); learner.go (routes and buckets), admit.go (what a request
// waits for), observe.go (what an answer teaches), events.go; schedule.go
// (a schedule's quotas and limits), counting.go (how a server counts),
// probe.go (a rate found from refusals), probe_accepts.go (the
// acceptances it counts), probe_full.go (a fixed window found full),
// probe_spread.go (spreading), probe_trial.go (a sliding log's schedule
// tried first), pace.go (a leaky bucket's gap), pace_limits.go (its
// limits, the request after its refusal, a late refinement), tokens.go
// (token budgets).
package learn
