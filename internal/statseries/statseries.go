// Package statseries is the one list of the numbers that rxthrottle's
// metric exporters (rxprom for Prometheus, rxotel for OpenTelemetry) read
// from the Stats of limiters, Transports and Guards: each number's name,
// help, kind and unit, and how to read it. A Stats field is exported by
// both once it is here; each exporter's TestEveryStatIsExported fails until
// it is.
package statseries

import (
	"strings"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// Kind is how a number behaves.
type Kind int

const (
	// Counter only grows: a count since the start.
	Counter Kind = iota
	// UpDown is a count of now that adds up across sources (callers
	// queued, tokens held): a Prometheus gauge, an OpenTelemetry up-down
	// counter.
	UpDown
	// Gauge is a value of now that does not add up (a minimum, a maximum).
	Gauge
)

// Series is one number read from a snapshot S.
type Series[S any] struct {
	// Name is the number's name under "rxthrottle", its parts separated by
	// dots ("transport.sent"): OpenTelemetry's name as it is, Prometheus's
	// with underscores and the unit and _total suffixes.
	Name string
	// Help describes it, one sentence.
	Help string
	Kind Kind
	// Unit is "s" for seconds, or an OpenTelemetry annotation ("{caller}")
	// for a count, which Prometheus names leave out.
	Unit string
	// Count reads a count; nil for a duration.
	Count func(S) int64
	// Seconds reads a duration in seconds; nil for a count.
	Seconds func(S) float64
}

// Value returns the number as a float64, whichever way it is read.
func (s Series[S]) Value(v S) float64 {
	if s.Seconds != nil {
		return s.Seconds(v)
	}
	return float64(s.Count(v))
}

// OTelName is the OpenTelemetry instrument's name: "rxthrottle.transport.sent".
func (s Series[S]) OTelName() string { return "rxthrottle." + s.Name }

// PromName is the Prometheus name: "rxthrottle_transport_sent_total",
// "rxthrottle_wait_seconds_total", "rxthrottle_queued".
func (s Series[S]) PromName() string {
	name := "rxthrottle_" + strings.ReplaceAll(s.Name, ".", "_")
	if s.Unit == "s" {
		name += "_seconds"
	}
	if s.Kind == Counter {
		name += "_total"
	}
	return name
}

func count[S any](name, unit string, k Kind, help string, f func(S) int64) Series[S] {
	return Series[S]{Name: name, Help: help, Kind: k, Unit: unit, Count: f}
}

func seconds[S any](name string, k Kind, help string, f func(S) float64) Series[S] {
	return Series[S]{Name: name, Help: help, Kind: k, Unit: "s", Seconds: f}
}

// u converts a counter to int64, saturating rather than wrapping to a
// negative count.
func u(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

// WaitBuckets returns the default bucket bounds, in seconds, of the wait
// histogram: 0 counts the callers that did not wait, the rest spans a
// millisecond to five minutes (a 429's typical pause).
func WaitBuckets() []float64 {
	return []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}
}

// Limiter is the numbers of every limiter.
var Limiter = []Series[rxthrottle.Stats]{
	count("admitted", "{caller}", Counter, "Callers or items the limiter let through.",
		func(s rxthrottle.Stats) int64 { return u(s.Admitted) }),
	count("waited", "{caller}", Counter, "Admitted callers that had to wait for a token or a pause.",
		func(s rxthrottle.Stats) int64 { return u(s.Waited) }),
	count("cancelled", "{caller}", Counter, "Waits that ended without a token.",
		func(s rxthrottle.Stats) int64 { return u(s.Cancelled) }),
	count("refused", "{caller}", Counter, "Callers refused at once because the queue bound was reached (WithMaxQueue).",
		func(s rxthrottle.Stats) int64 { return u(s.Refused) }),
	seconds("wait", Counter, "Sum of the waits of admitted callers.",
		func(s rxthrottle.Stats) float64 { return s.TotalWait.Seconds() }),
	seconds("max_wait", Gauge, "Longest wait of an admitted caller so far.",
		func(s rxthrottle.Stats) float64 { return s.MaxWait.Seconds() }),
	count("queued", "{caller}", UpDown, "Callers waiting now.",
		func(s rxthrottle.Stats) int64 { return int64(s.Queued) }),
}

// Single is the numbers of a single-quota limiter only.
var Single = []Series[rxthrottle.Stats]{
	count("free_tokens", "{token}", Gauge, "Tokens free now (for several limits, the smallest count).",
		func(s rxthrottle.Stats) int64 { return int64(s.Free) }),
	count("held_tokens", "{token}", UpDown, "Tokens held now by the Tokens of Acquire, not yet released.",
		func(s rxthrottle.Stats) int64 { return int64(s.Held) }), count("concurrency_cap", "{call}", Gauge, "Cap on the calls in flight now (WithConcurrency, or WithAdaptiveConcurrency as it moved); 0 for none.",
		func(s rxthrottle.Stats) int64 { return int64(s.ConcurrencyCap) }),
}

// Keyed is the numbers of a keyed limiter only.
var Keyed = []Series[rxthrottle.Stats]{
	count("keys_live", "{key}", UpDown, "Keys whose state the limiter keeps now.",
		func(s rxthrottle.Stats) int64 { return int64(s.KeysLive) }),
	count("keys_blocked", "{key}", UpDown, "Keys that are paused or have callers waiting now.",
		func(s rxthrottle.Stats) int64 { return int64(s.KeysBlocked) }),
}

// Transport is the numbers of an httpthrottle.Transport.
var Transport = []Series[httpthrottle.TransportStats]{
	count("transport.sent", "{request}", Counter, "Requests handed to the base RoundTripper, retries included.",
		func(s httpthrottle.TransportStats) int64 { return u(s.Sent) }),
	count("transport.cancelled", "{request}", Counter, "Requests that failed while waiting for a token and were not sent.",
		func(s httpthrottle.TransportStats) int64 { return u(s.Cancelled) }),
	count("transport.pushbacks", "{response}", Counter, "Responses (429, 503, quota headers) that paused the limiter.",
		func(s httpthrottle.TransportStats) int64 { return u(s.Pushbacks) }),
	count("transport.retries", "{request}", Counter, "429 responses the Transport retried.",
		func(s httpthrottle.TransportStats) int64 { return u(s.Retries) }),
	count("transport.header_errors", "{header}", Counter, "Rate-limit headers the Transport could not read.",
		func(s httpthrottle.TransportStats) int64 { return u(s.HeaderErrors) }),
	count("transport.attempts", "{attempt}", Counter, "Attempts on the wire: requests sent plus the base's own re-sends.",
		func(s httpthrottle.TransportStats) int64 { return u(s.Attempts) }),
	count("transport.resends", "{attempt}", Counter, "Times the base sent a request again by itself, each with a token of its own.",
		func(s httpthrottle.TransportStats) int64 { return u(s.Resends) }),
	count("transport.errors_unwritten", "{attempt}", Counter, "Attempts that failed before their request was written; their token went back unused.",
		func(s httpthrottle.TransportStats) int64 { return u(s.ErrorsUnwritten) }),
	count("transport.errors_after_write", "{attempt}", Counter, "Attempts that failed after their request may have been written.",
		func(s httpthrottle.TransportStats) int64 { return u(s.ErrorsAfterWrite) }),
	count("transport.held_past_error", "{token}", Counter, "Tokens held past their attempt's error, for the in-flight bound.",
		func(s httpthrottle.TransportStats) int64 { return u(s.HeldPastError) }),
	count("transport.holding_past_error", "{token}", UpDown, "Tokens held past their error now, waiting for the in-flight bound.",
		func(s httpthrottle.TransportStats) int64 { return s.HoldingPastError }),
	count("transport.attempt_timeouts", "{attempt}", Counter, "Attempts ended by WithAttemptTimeout.",
		func(s httpthrottle.TransportStats) int64 { return u(s.AttemptTimeouts) }),
}

// Guard is the numbers of a guard.Guard.
var Guard = []Series[guard.Stats]{
	count("guard.checks", "{check}", Counter, "Checks made.",
		func(s guard.Stats) int64 { return u(s.Checks) }),
	count("guard.allowed", "{check}", Counter, "Checks allowed.",
		func(s guard.Stats) int64 { return u(s.Allowed) }),
	count("guard.refused", "{check}", Counter, "Checks refused.",
		func(s guard.Stats) int64 { return u(s.Refused) }),
	count("guard.errors", "{check}", Counter, "Checks the store could not decide.",
		func(s guard.Stats) int64 { return u(s.Errors) }),
	count("guard.blocks", "{block}", Counter, "Times a key was blocked.",
		func(s guard.Stats) int64 { return u(s.Blocks) }),
	count("guard.full", "{check}", Counter, "Checks of new keys refused because the store held its maximum of live keys (counted in refused too).",
		func(s guard.Stats) int64 { return u(s.Full) }),
	count("guard.keys_live", "{key}", UpDown, "Keys with a window or a block in force now.",
		func(s guard.Stats) int64 { return int64(s.KeysLive) }),
	count("guard.keys_blocked", "{key}", UpDown, "Keys blocked now.",
		func(s guard.Stats) int64 { return int64(s.KeysBlocked) }),
}
