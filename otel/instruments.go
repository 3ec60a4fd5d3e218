package rxotel

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// kind is the OpenTelemetry instrument a series is exported as.
type kind int

const (
	counter       kind = iota // monotonic: a count since the start
	upDownCounter             // additive now: a sum over limiters means something
	gauge                     // non-additive now: a minimum, a maximum
)

// series is one instrument read from a Stats snapshot S: its name, unit,
// description and kind, and its value as an integer count or as seconds.
type series[S any] struct {
	name, unit, desc string
	kind             kind
	count            func(S) int64   // set for counts
	seconds          func(S) float64 // set for durations, in seconds
}

func countSeries[S any](name, unit string, k kind, desc string, f func(S) int64) series[S] {
	return series[S]{name: name, unit: unit, desc: desc, kind: k, count: f}
}

func secondsSeries[S any](name string, k kind, desc string, f func(S) float64) series[S] {
	return series[S]{name: name, unit: "s", desc: desc, kind: k, seconds: f}
}

// observable makes the instrument of s on m.
func (s series[S]) observable(m metric.Meter) (metric.Observable, error) {
	unit, desc := metric.WithUnit(s.unit), metric.WithDescription(s.desc)
	if s.seconds != nil {
		switch s.kind {
		case counter:
			return m.Float64ObservableCounter(s.name, unit, desc)
		case upDownCounter:
			return m.Float64ObservableUpDownCounter(s.name, unit, desc)
		}
		return m.Float64ObservableGauge(s.name, unit, desc)
	}
	switch s.kind {
	case counter:
		return m.Int64ObservableCounter(s.name, unit, desc)
	case upDownCounter:
		return m.Int64ObservableUpDownCounter(s.name, unit, desc)
	}
	return m.Int64ObservableGauge(s.name, unit, desc)
}

// observe reports the value of s for the snapshot v on o.
func (s series[S]) observe(o metric.Observer, inst metric.Observable, v S, attrs metric.ObserveOption) {
	if s.seconds != nil {
		o.ObserveFloat64(inst.(metric.Float64Observable), s.seconds(v), attrs)
		return
	}
	o.ObserveInt64(inst.(metric.Int64Observable), s.count(v), attrs)
}

// The instruments of every limiter, with the attribute limiter="name".
// Their names are rxprom's with dots for OpenTelemetry, the unit as a
// unit, not in the name, and no _total: OpenTelemetry's Prometheus
// exporter turns rxthrottle.admitted into rxthrottle_admitted_total and
// rxthrottle.wait (unit s) into rxthrottle_wait_seconds_total, rxprom's
// names.
var limiterSeries = []series[rxthrottle.Stats]{
	countSeries("rxthrottle.admitted", "{caller}", counter, "Callers or items the limiter let through.",
		func(s rxthrottle.Stats) int64 { return clampU(s.Admitted) }),
	countSeries("rxthrottle.waited", "{caller}", counter, "Admitted callers that had to wait for a token or a pause.",
		func(s rxthrottle.Stats) int64 { return clampU(s.Waited) }),
	countSeries("rxthrottle.cancelled", "{caller}", counter, "Waits that ended without a token.",
		func(s rxthrottle.Stats) int64 { return clampU(s.Cancelled) }),
	countSeries("rxthrottle.refused", "{caller}", counter, "Callers refused at once because the queue bound was reached (WithMaxQueue).",
		func(s rxthrottle.Stats) int64 { return clampU(s.Refused) }),
	secondsSeries("rxthrottle.wait", counter, "Sum of the waits of admitted callers.",
		func(s rxthrottle.Stats) float64 { return s.TotalWait.Seconds() }),
	secondsSeries("rxthrottle.max_wait", gauge, "Longest wait of an admitted caller so far.",
		func(s rxthrottle.Stats) float64 { return s.MaxWait.Seconds() }),
	countSeries("rxthrottle.queued", "{caller}", upDownCounter, "Callers waiting now.",
		func(s rxthrottle.Stats) int64 { return int64(s.Queued) }),
}

// The instruments of a single-quota limiter only.
var singleSeries = []series[rxthrottle.Stats]{
	countSeries("rxthrottle.free_tokens", "{token}", gauge, "Tokens free now (for several limits, the smallest count).",
		func(s rxthrottle.Stats) int64 { return int64(s.Free) }),
	countSeries("rxthrottle.held_tokens", "{token}", upDownCounter, "Tokens held now by the Tokens of Acquire, not yet released.",
		func(s rxthrottle.Stats) int64 { return int64(s.Held) }),
}

// The instruments of a keyed limiter only.
var keyedSeries = []series[rxthrottle.Stats]{
	countSeries("rxthrottle.keys_live", "{key}", upDownCounter, "Keys whose state the limiter keeps now.",
		func(s rxthrottle.Stats) int64 { return int64(s.KeysLive) }),
	countSeries("rxthrottle.keys_blocked", "{key}", upDownCounter, "Keys that are paused or have callers waiting now.",
		func(s rxthrottle.Stats) int64 { return int64(s.KeysBlocked) }),
}

// The instruments of an httpthrottle.Transport, with transport="name".
var transportSeries = []series[httpthrottle.TransportStats]{
	countSeries("rxthrottle.transport.sent", "{request}", counter, "Requests handed to the base RoundTripper, retries included.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.Sent) }),
	countSeries("rxthrottle.transport.cancelled", "{request}", counter, "Requests that failed while waiting for a token and were not sent.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.Cancelled) }),
	countSeries("rxthrottle.transport.pushbacks", "{response}", counter, "Responses (429, 503, quota headers) that paused the limiter.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.Pushbacks) }),
	countSeries("rxthrottle.transport.retries", "{request}", counter, "429 responses the Transport retried.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.Retries) }),
	countSeries("rxthrottle.transport.header_errors", "{header}", counter, "Rate-limit headers the Transport could not read.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.HeaderErrors) }),
	countSeries("rxthrottle.transport.attempts", "{attempt}", counter, "Attempts on the wire: requests sent plus the base's own re-sends.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.Attempts) }),
	countSeries("rxthrottle.transport.resends", "{attempt}", counter, "Times the base sent a request again by itself, each with a token of its own.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.Resends) }),
	countSeries("rxthrottle.transport.errors_unwritten", "{attempt}", counter, "Attempts that failed before their request was written; their token went back unused.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.ErrorsUnwritten) }),
	countSeries("rxthrottle.transport.errors_after_write", "{attempt}", counter, "Attempts that failed after their request may have been written.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.ErrorsAfterWrite) }),
	countSeries("rxthrottle.transport.held_past_error", "{token}", counter, "Tokens held past their attempt's error, for the in-flight bound.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.HeldPastError) }),
	countSeries("rxthrottle.transport.holding_past_error", "{token}", upDownCounter, "Tokens held past their error now, waiting for the in-flight bound.",
		func(s httpthrottle.TransportStats) int64 { return s.HoldingPastError }),
	countSeries("rxthrottle.transport.attempt_timeouts", "{attempt}", counter, "Attempts ended by WithAttemptTimeout.",
		func(s httpthrottle.TransportStats) int64 { return clampU(s.AttemptTimeouts) }),
}

// The instruments of a guard.Guard, with guard="name".
var guardSeries = []series[guard.Stats]{
	countSeries("rxthrottle.guard.checks", "{check}", counter, "Checks made.",
		func(s guard.Stats) int64 { return clampU(s.Checks) }),
	countSeries("rxthrottle.guard.allowed", "{check}", counter, "Checks allowed.",
		func(s guard.Stats) int64 { return clampU(s.Allowed) }),
	countSeries("rxthrottle.guard.refused", "{check}", counter, "Checks refused.",
		func(s guard.Stats) int64 { return clampU(s.Refused) }),
	countSeries("rxthrottle.guard.errors", "{check}", counter, "Checks the store could not decide.",
		func(s guard.Stats) int64 { return clampU(s.Errors) }),
	countSeries("rxthrottle.guard.blocks", "{block}", counter, "Times a key was blocked.",
		func(s guard.Stats) int64 { return clampU(s.Blocks) }),
	countSeries("rxthrottle.guard.keys_live", "{key}", upDownCounter, "Keys with a window or a block in force now.",
		func(s guard.Stats) int64 { return int64(s.KeysLive) }),
	countSeries("rxthrottle.guard.keys_blocked", "{key}", upDownCounter, "Keys blocked now.",
		func(s guard.Stats) int64 { return int64(s.KeysBlocked) }),
}

// clampU converts a counter to the int64 OpenTelemetry takes, saturating
// rather than wrapping to a negative count.
func clampU(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}
