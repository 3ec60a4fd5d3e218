// Package rxprom exports the statistics of rxthrottle's limiters,
// httpthrottle's Transports and guard's Guards to Prometheus: a
// prometheus.Collector over their Stats, and a wait histogram fed by the
// limiters' OnAdmit hook.
//
// It is the nested module github.com/rxthrottle/rxthrottle/prometheus, so
// that only programs that import it depend on client_golang. Its package
// name is rxprom, so that it does not shadow client_golang's prometheus:
//
//	import rxprom "github.com/rxthrottle/rxthrottle/prometheus"
//
//	c, err := rxprom.NewCollector()
//	// handle err
//	observe, err := c.ObserveWait("github")
//	// handle err
//	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5000, time.Hour), rxthrottle.OnAdmit(observe))
//	// handle err
//	if err := c.AddLimiter("github", bucket); err != nil { ... }
//	prometheus.MustRegister(c)
//	http.Handle("/metrics", promhttp.Handler())
//
// # Metrics
//
// Every limiter added with AddLimiter or AddKeyed, labelled limiter="name":
//
//	rxthrottle_admitted_total      counter    Stats.Admitted
//	rxthrottle_waited_total        counter    Stats.Waited
//	rxthrottle_cancelled_total     counter    Stats.Cancelled
//	rxthrottle_refused_total       counter    Stats.Refused
//	rxthrottle_failed_total        counter    Stats.Failed
//	rxthrottle_wait_seconds_total  counter    Stats.TotalWait
//	rxthrottle_max_wait_seconds    gauge      Stats.MaxWait
//	rxthrottle_queued              gauge      Stats.Queued
//	rxthrottle_free_tokens         gauge      Stats.Free (AddLimiter only)
//	rxthrottle_held_tokens         gauge      Stats.Held (AddLimiter only)
//	rxthrottle_concurrency_cap     gauge      Stats.ConcurrencyCap (AddLimiter only)
//	rxthrottle_released_total      counter    Stats.Released (AddLimiter only)
//	rxthrottle_hold_seconds_total  counter    Stats.TotalHold (AddLimiter only)
//	rxthrottle_keys_live           gauge      Stats.KeysLive (AddKeyed only)
//	rxthrottle_keys_blocked        gauge      Stats.KeysBlocked (AddKeyed only)
//	rxthrottle_wait_seconds        histogram  each admitted caller's wait,
//	                                          from the hook ObserveWait returns
//
// Every Transport added with AddTransport, labelled transport="name":
//
//	rxthrottle_transport_sent_total           counter  TransportStats.Sent
//	rxthrottle_transport_cancelled_total      counter  TransportStats.Cancelled
//	rxthrottle_transport_failed_total         counter  TransportStats.Failed
//	rxthrottle_transport_pushbacks_total      counter  TransportStats.Pushbacks
//	rxthrottle_transport_retries_total        counter  TransportStats.Retries
//	rxthrottle_transport_header_errors_total  counter  TransportStats.HeaderErrors
//	rxthrottle_transport_attempts_total            counter  TransportStats.Attempts
//	rxthrottle_transport_resends_total             counter  TransportStats.Resends
//	rxthrottle_transport_errors_unwritten_total    counter  TransportStats.ErrorsUnwritten
//	rxthrottle_transport_errors_after_write_total  counter  TransportStats.ErrorsAfterWrite
//	rxthrottle_transport_held_past_error_total     counter  TransportStats.HeldPastError
//	rxthrottle_transport_holding_past_error        gauge    TransportStats.HoldingPastError
//	rxthrottle_transport_attempt_timeouts_total    counter  TransportStats.AttemptTimeouts
//	rxthrottle_transport_late_answers_total        counter  TransportStats.LateAnswers
//	rxthrottle_transport_peer_closes_total         counter  TransportStats.PeerCloses
//	rxthrottle_transport_refused_streams_total     counter  TransportStats.RefusedStreams
//	rxthrottle_transport_retries_answered_late_total counter TransportStats.RetriesAnsweredLate
//	rxthrottle_transport_resets_total              counter  TransportStats.Resets
//	rxthrottle_transport_kept_open                 gauge    TransportStats.KeptOpen
//
// Every Guard added with AddGuard, labelled guard="name":
//
//	rxthrottle_guard_checks_total   counter  guard.Stats.Checks
//	rxthrottle_guard_allowed_total  counter  guard.Stats.Allowed
//	rxthrottle_guard_refused_total  counter  guard.Stats.Refused
//	rxthrottle_guard_errors_total   counter  guard.Stats.Errors
//	rxthrottle_guard_blocks_total   counter  guard.Stats.Blocks
//	rxthrottle_guard_full_total     counter  guard.Stats.Full
//	rxthrottle_guard_keys_live      gauge    guard.Stats.KeysLive
//	rxthrottle_guard_keys_blocked   gauge    guard.Stats.KeysBlocked
//
// Any other Stats, through its Figures (rxthrottle.Figures), with AddStats,
// labelled by its Source; rxprom imports neither gRPC nor Redis for them:
//
//	rxthrottle_learn_changes_total, _not_applied_total, _refusals_total,
//	rxthrottle_learn_buckets, rxthrottle_learn_last_rate
//	                  a learning Transport's LearnStats, transport="name"
//	rxthrottle_grpc_sent_total, ... (as the Transport's)
//	                  grpcthrottle's Interceptor.Stats, interceptor="name"
//	rxthrottle_leased_total
//	                  redisstore's Bucket.LeaseStats, limiter="name"
//
//	rxprom.AddStats(c, "api", interceptor.Stats)
//
// # Dashboard
//
// grafana/rxthrottle.json in this module is a Grafana dashboard over these
// series (import it, and pick the Prometheus data source): admissions,
// refusals and cancellations per limiter, wait and hold time, held and
// free tokens, queue length, learned limits, the lease hit rate and the
// concurrency cap (WithConcurrency's, or WithAdaptiveConcurrency's as it
// moves); each Transport's and Interceptor's requests (sent, cancelled,
// failed by the limiter, pushbacks, retries), attempts on the wire and
// errors with the tokens held past them; each Guard's checks.
// TestDashboard checks that every metric it names is one rxprom exports,
// and that every counter rxprom exports has a panel.
//
// The Stats are read when Prometheus scrapes, so they cost nothing between
// scrapes. Keys (users, tokens) are never labels: they are unbounded, and so
// would the number of series be.
package rxprom
