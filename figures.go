package rxthrottle

// Figure is one number of a Stats snapshot, described so that an exporter
// can export it without knowing the snapshot's type: rxprom (Prometheus)
// and rxotel (OpenTelemetry) export every Stats of rxthrottle's modules
// through their Figures, and any snapshot of yours that has them.
type Figure struct {
	// Source is what the number is of, which exporters label with the
	// name the source was added under: "limiter", "transport", "guard",
	// "interceptor".
	Source string
	// Name is the number's name under "rxthrottle", its parts separated by
	// dots ("admitted", "transport.sent"): OpenTelemetry's name as it is,
	// Prometheus's with underscores and the unit and _total suffixes.
	Name string
	// Help describes the number in one sentence.
	Help string
	// Kind is how the number behaves.
	Kind FigureKind
	// Unit is "s" for a duration in seconds, or an OpenTelemetry annotation
	// for a count ("{caller}"), which Prometheus names leave out.
	Unit string
	// Value is the number at the snapshot.
	Value float64
}

// FigureKind is how a Figure behaves.
type FigureKind int

const (
	// FigureCounter only grows: a count (or a sum) since the start.
	FigureCounter FigureKind = iota
	// FigureUpDown is a count of now that adds up across sources (callers
	// queued, tokens held): a Prometheus gauge, an OpenTelemetry up-down
	// counter.
	FigureUpDown
	// FigureGauge is a value of now that does not add up (a maximum, a
	// rate): a gauge in both.
	FigureGauge
)

// Figures is what a Stats snapshot is to an exporter. Stats (of every
// limiter), httpthrottle.TransportStats and LearnStats, guard.Stats,
// grpcthrottle.Stats and redisstore.LeaseStats implement it.
type Figures interface {
	// Figures returns the snapshot's numbers. Every snapshot of one type,
	// its zero value included, gives the same figures but for their
	// Values, in the same order, all of one Source: an exporter can
	// describe them before it reads the first snapshot.
	Figures() []Figure
}

// Figures returns the numbers of the snapshot, of Source "limiter": those
// of every limiter, then free_tokens and held_tokens (of a single quota),
// then keys_live and keys_blocked (of a keyed limiter).
func (s Stats) Figures() []Figure {
	return []Figure{
		limiterFigure("admitted", "{caller}", FigureCounter, "Callers or items the limiter let through.", float64(s.Admitted)),
		limiterFigure("waited", "{caller}", FigureCounter, "Admitted callers that had to wait for a token or a pause.", float64(s.Waited)),
		limiterFigure("cancelled", "{caller}", FigureCounter, "Waits that ended without a token.", float64(s.Cancelled)),
		limiterFigure("refused", "{caller}", FigureCounter, "Callers refused at once because the queue bound was reached (WithMaxQueue).", float64(s.Refused)),
		limiterFigure("failed", "{caller}", FigureCounter, "Callers that ended with an error of the limiter's store (a shared store's outage under FailClosed).", float64(s.Failed)),
		limiterFigure("wait", "s", FigureCounter, "Sum of the waits of admitted callers.", s.TotalWait.Seconds()),
		limiterFigure("max_wait", "s", FigureGauge, "Longest wait of an admitted caller so far.", s.MaxWait.Seconds()),
		limiterFigure("queued", "{caller}", FigureUpDown, "Callers waiting now.", float64(s.Queued)),
		limiterFigure("free_tokens", "{token}", FigureGauge, "Tokens free now (for several limits, the smallest count).", float64(s.Free)),
		limiterFigure("held_tokens", "{token}", FigureUpDown, "Tokens held now by the Tokens of Acquire, not yet released.", float64(s.Held)),
		limiterFigure("concurrency_cap", "{call}", FigureGauge, "Cap on the calls in flight now (WithConcurrency, or WithAdaptiveConcurrency as it moved); 0 for none.", float64(s.ConcurrencyCap)),
		limiterFigure("released", "{token}", FigureCounter, "Tokens of Acquire whose call completed: released or timed out.", float64(s.Released)),
		limiterFigure("hold", "s", FigureCounter, "Sum of the holds of the Tokens of Acquire whose call completed, from admission to release or timeout.", s.TotalHold.Seconds()),
		limiterFigure("keys_live", "{key}", FigureUpDown, "Keys whose state the limiter keeps now.", float64(s.KeysLive)),
		limiterFigure("keys_blocked", "{key}", FigureUpDown, "Keys that are paused or have callers waiting now.", float64(s.KeysBlocked)),
	}
}

func limiterFigure(name, unit string, k FigureKind, help string, v float64) Figure {
	return Figure{Source: "limiter", Name: name, Help: help, Kind: k, Unit: unit, Value: v}
}
