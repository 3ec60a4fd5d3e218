// Package rxotel exports the statistics of rxthrottle's limiters,
// httpthrottle's Transports and guard's Guards through the OpenTelemetry
// metric API: asynchronous instruments over their Stats, and a wait
// histogram fed by the limiters' OnAdmit hook. It is rxprom's counterpart
// (package github.com/rxthrottle/rxthrottle/prometheus), with the same
// instruments under OpenTelemetry's naming: both read their numbers from
// one list, so a Stats field one exports the other does too.
//
// It is the nested module github.com/rxthrottle/rxthrottle/otel, so that
// only programs that import it depend on OpenTelemetry. Its package name is
// rxotel, so that it does not shadow go.opentelemetry.io/otel:
//
//	import rxotel "github.com/rxthrottle/rxthrottle/otel"
//
//	m, err := rxotel.New(rxotel.WithMeterProvider(provider)) // or the global one
//	// handle err
//	observe, err := m.ObserveWait("github")
//	// handle err
//	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5000, time.Hour), rxthrottle.OnAdmit(observe))
//	// handle err
//	if err := m.AddLimiter("github", bucket); err != nil { ... }
//
// # Instruments
//
// Every limiter added with AddLimiter or AddKeyed, with the attribute
// limiter="name":
//
//	rxthrottle.admitted        counter          {caller}  Stats.Admitted
//	rxthrottle.waited          counter          {caller}  Stats.Waited
//	rxthrottle.cancelled       counter          {caller}  Stats.Cancelled
//	rxthrottle.refused         counter          {caller}  Stats.Refused
//	rxthrottle.failed          counter          {caller}  Stats.Failed
//	rxthrottle.wait            counter          s         Stats.TotalWait
//	rxthrottle.max_wait        gauge            s         Stats.MaxWait
//	rxthrottle.queued          up-down counter  {caller}  Stats.Queued
//	rxthrottle.free_tokens     gauge            {token}   Stats.Free (AddLimiter only)
//	rxthrottle.held_tokens     up-down counter  {token}   Stats.Held (AddLimiter only)
//	rxthrottle.concurrency_cap gauge            {call}    Stats.ConcurrencyCap (AddLimiter only)
//	rxthrottle.released        counter          {token}   Stats.Released (AddLimiter only)
//	rxthrottle.hold            counter          s         Stats.TotalHold (AddLimiter only)
//	rxthrottle.keys_live       up-down counter  {key}     Stats.KeysLive (AddKeyed only)
//	rxthrottle.keys_blocked    up-down counter  {key}     Stats.KeysBlocked (AddKeyed only)
//	rxthrottle.wait.duration   histogram        s         each admitted caller's wait,
//	                                                      from the hook ObserveWait returns
//
// Every Transport added with AddTransport, with transport="name":
//
//	rxthrottle.transport.sent           counter  {request}   TransportStats.Sent
//	rxthrottle.transport.cancelled      counter  {request}   TransportStats.Cancelled
//	rxthrottle.transport.failed         counter  {request}   TransportStats.Failed
//	rxthrottle.transport.pushbacks      counter  {response}  TransportStats.Pushbacks
//	rxthrottle.transport.retries        counter  {request}   TransportStats.Retries
//	rxthrottle.transport.header_errors  counter  {header}    TransportStats.HeaderErrors
//	rxthrottle.transport.attempts            counter          {attempt}  TransportStats.Attempts
//	rxthrottle.transport.resends             counter          {attempt}  TransportStats.Resends
//	rxthrottle.transport.errors_unwritten    counter          {attempt}  TransportStats.ErrorsUnwritten
//	rxthrottle.transport.errors_after_write  counter          {attempt}  TransportStats.ErrorsAfterWrite
//	rxthrottle.transport.held_past_error     counter          {token}    TransportStats.HeldPastError
//	rxthrottle.transport.holding_past_error  up-down counter  {token}    TransportStats.HoldingPastError
//	rxthrottle.transport.attempt_timeouts    counter          {attempt}  TransportStats.AttemptTimeouts
//	rxthrottle.transport.late_answers        counter          {attempt}     TransportStats.LateAnswers
//	rxthrottle.transport.peer_closes         counter          {attempt}     TransportStats.PeerCloses
//	rxthrottle.transport.refused_streams     counter          {attempt}     TransportStats.RefusedStreams
//	rxthrottle.transport.retries_answered_late counter        {request}     TransportStats.RetriesAnsweredLate
//	rxthrottle.transport.resets              counter          {connection}  TransportStats.Resets
//	rxthrottle.transport.kept_open           up-down counter  {attempt}     TransportStats.KeptOpen
//
// Every Guard added with AddGuard, with guard="name":
//
//	rxthrottle.guard.checks        counter          {check}  guard.Stats.Checks
//	rxthrottle.guard.allowed       counter          {check}  guard.Stats.Allowed
//	rxthrottle.guard.refused       counter          {check}  guard.Stats.Refused
//	rxthrottle.guard.errors        counter          {check}  guard.Stats.Errors
//	rxthrottle.guard.blocks        counter          {block}  guard.Stats.Blocks
//	rxthrottle.guard.full          counter          {check}  guard.Stats.Full
//	rxthrottle.guard.keys_live     up-down counter  {key}    guard.Stats.KeysLive
//	rxthrottle.guard.keys_blocked  up-down counter  {key}    guard.Stats.KeysBlocked
//
// Any other Stats, through its Figures (rxthrottle.Figures), with AddStats,
// with the attribute of its Source; rxotel imports neither gRPC nor Redis
// for them: a learning Transport's LearnStats (rxthrottle.learn.changes,
// .not_applied, .refusals, .buckets, .last_rate; transport="name"),
// grpcthrottle's Interceptor.Stats (rxthrottle.grpc.sent, ...;
// interceptor="name") and redisstore's Bucket.LeaseStats
// (rxthrottle.leased; limiter="name"):
//
//	rxotel.AddStats(m, "api", interceptor.Stats)
//
// The names are rxprom's with OpenTelemetry's conventions: dots, the unit
// as the instrument's unit rather than in the name, no _total. Through
// OpenTelemetry's Prometheus exporter they come out as rxprom's names
// (rxthrottle.admitted as rxthrottle_admitted_total, rxthrottle.wait in s
// as rxthrottle_wait_seconds_total), but for the histogram: OpenTelemetry
// names a duration histogram apart from the counter of the same quantity,
// so rxprom's rxthrottle_wait_seconds is rxthrottle.wait.duration here.
// Counts of "now" that add up across limiters (queued, held, keys) are
// up-down counters; a minimum or a maximum (free_tokens, max_wait) is a
// gauge.
//
// The Stats are read at each collection, so they cost nothing between
// collections. Keys (users, tokens) are never attributes: they are
// unbounded, and so would the number of series be.
package rxotel
