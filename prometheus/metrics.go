package rxprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// metric is one series read from a Stats snapshot S: its description, its
// type and how to read its value.
type metric[S any] struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(S) float64
}

// newMetric describes the series name with help and one label.
func newMetric[S any](name, label, help string, typ prometheus.ValueType, value func(S) float64) metric[S] {
	return metric[S]{prometheus.NewDesc(name, help, []string{label}, nil), typ, value}
}

// collect sends the series of ms for the snapshot s, labelled name.
func collect[S any](ch chan<- prometheus.Metric, ms []metric[S], s S, name string) {
	for _, m := range ms {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(s), name)
	}
}

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// The series of every limiter, labelled limiter="name".
var limiterMetrics = []metric[rxthrottle.Stats]{
	newMetric("rxthrottle_admitted_total", "limiter", "Callers or items the limiter let through.", counter,
		func(s rxthrottle.Stats) float64 { return float64(s.Admitted) }),
	newMetric("rxthrottle_waited_total", "limiter", "Admitted callers that had to wait for a token or a pause.", counter,
		func(s rxthrottle.Stats) float64 { return float64(s.Waited) }),
	newMetric("rxthrottle_cancelled_total", "limiter", "Waits that ended without a token.", counter,
		func(s rxthrottle.Stats) float64 { return float64(s.Cancelled) }),
	newMetric("rxthrottle_refused_total", "limiter", "Callers refused at once because the queue bound was reached (WithMaxQueue).", counter,
		func(s rxthrottle.Stats) float64 { return float64(s.Refused) }),
	newMetric("rxthrottle_wait_seconds_total", "limiter", "Sum of the waits of admitted callers.", counter,
		func(s rxthrottle.Stats) float64 { return s.TotalWait.Seconds() }),
	newMetric("rxthrottle_max_wait_seconds", "limiter", "Longest wait of an admitted caller so far.", gauge,
		func(s rxthrottle.Stats) float64 { return s.MaxWait.Seconds() }),
	newMetric("rxthrottle_queued", "limiter", "Callers waiting now.", gauge,
		func(s rxthrottle.Stats) float64 { return float64(s.Queued) }),
}

// The series of a single-quota limiter only.
var singleMetrics = []metric[rxthrottle.Stats]{
	newMetric("rxthrottle_free_tokens", "limiter", "Tokens free now (for several limits, the smallest count).", gauge,
		func(s rxthrottle.Stats) float64 { return float64(s.Free) }),
	newMetric("rxthrottle_held_tokens", "limiter", "Tokens held now by the Tokens of Acquire, not yet released.", gauge,
		func(s rxthrottle.Stats) float64 { return float64(s.Held) }),
}

// The series of a keyed limiter only.
var keyedMetrics = []metric[rxthrottle.Stats]{
	newMetric("rxthrottle_keys_live", "limiter", "Keys whose state the limiter keeps now.", gauge,
		func(s rxthrottle.Stats) float64 { return float64(s.KeysLive) }),
	newMetric("rxthrottle_keys_blocked", "limiter", "Keys that are paused or have callers waiting now.", gauge,
		func(s rxthrottle.Stats) float64 { return float64(s.KeysBlocked) }),
}

// The series of an httpthrottle.Transport, labelled transport="name".
var transportMetrics = []metric[httpthrottle.TransportStats]{
	newMetric("rxthrottle_transport_sent_total", "transport", "Requests handed to the base RoundTripper, retries included.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.Sent) }),
	newMetric("rxthrottle_transport_cancelled_total", "transport", "Requests that failed while waiting for a token and were not sent.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.Cancelled) }),
	newMetric("rxthrottle_transport_pushbacks_total", "transport", "Responses (429, 503, quota headers) that paused the limiter.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.Pushbacks) }),
	newMetric("rxthrottle_transport_retries_total", "transport", "429 responses the Transport retried.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.Retries) }),
	newMetric("rxthrottle_transport_header_errors_total", "transport", "Rate-limit headers the Transport could not read.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.HeaderErrors) }),
	newMetric("rxthrottle_transport_attempts_total", "transport", "Attempts on the wire: requests sent plus the base's own re-sends.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.Attempts) }),
	newMetric("rxthrottle_transport_resends_total", "transport", "Times the base sent a request again by itself, each with a token of its own.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.Resends) }),
	newMetric("rxthrottle_transport_errors_unwritten_total", "transport", "Attempts that failed before their request was written; their token went back unused.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.ErrorsUnwritten) }),
	newMetric("rxthrottle_transport_errors_after_write_total", "transport", "Attempts that failed after their request may have been written.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.ErrorsAfterWrite) }),
	newMetric("rxthrottle_transport_held_past_error_total", "transport", "Tokens held past their attempt's error, for the in-flight bound.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.HeldPastError) }),
	newMetric("rxthrottle_transport_holding_past_error", "transport", "Tokens held past their error now, waiting for the in-flight bound.", gauge,
		func(s httpthrottle.TransportStats) float64 { return float64(s.HoldingPastError) }),
	newMetric("rxthrottle_transport_attempt_timeouts_total", "transport", "Attempts ended by WithAttemptTimeout.", counter,
		func(s httpthrottle.TransportStats) float64 { return float64(s.AttemptTimeouts) }),
}

// The series of a guard.Guard, labelled guard="name".
var guardMetrics = []metric[guard.Stats]{
	newMetric("rxthrottle_guard_checks_total", "guard", "Checks made.", counter,
		func(s guard.Stats) float64 { return float64(s.Checks) }),
	newMetric("rxthrottle_guard_allowed_total", "guard", "Checks allowed.", counter,
		func(s guard.Stats) float64 { return float64(s.Allowed) }),
	newMetric("rxthrottle_guard_refused_total", "guard", "Checks refused.", counter,
		func(s guard.Stats) float64 { return float64(s.Refused) }),
	newMetric("rxthrottle_guard_errors_total", "guard", "Checks the store could not decide.", counter,
		func(s guard.Stats) float64 { return float64(s.Errors) }),
	newMetric("rxthrottle_guard_blocks_total", "guard", "Times a key was blocked.", counter,
		func(s guard.Stats) float64 { return float64(s.Blocks) }),
	newMetric("rxthrottle_guard_keys_live", "guard", "Keys with a window or a block in force now.", gauge,
		func(s guard.Stats) float64 { return float64(s.KeysLive) }),
	newMetric("rxthrottle_guard_keys_blocked", "guard", "Keys blocked now.", gauge,
		func(s guard.Stats) float64 { return float64(s.KeysBlocked) }),
}

// describe sends the descriptions of ms.
func describe[S any](ch chan<- *prometheus.Desc, ms []metric[S]) {
	for _, m := range ms {
		ch <- m.desc
	}
}
