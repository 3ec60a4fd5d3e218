package httpthrottle

import "github.com/rxthrottle/rxthrottle"

// Figures returns the numbers of the snapshot, of Source "transport", for
// an exporter (rxthrottle.Figures).
func (s TransportStats) Figures() []rxthrottle.Figure {
	c, ud := rxthrottle.FigureCounter, rxthrottle.FigureUpDown
	return []rxthrottle.Figure{
		transportFigure("transport.sent", "{request}", c, "Requests handed to the base RoundTripper, retries included.", float64(s.Sent)),
		transportFigure("transport.cancelled", "{request}", c, "Requests not sent: their context ended while they waited for a token, or the limiter refused them.", float64(s.Cancelled)),
		transportFigure("transport.failed", "{request}", c, "Requests not sent because the limiter failed (a shared store's outage).", float64(s.Failed)),
		transportFigure("transport.pushbacks", "{response}", c, "Responses (429, 503, quota headers) that paused the limiter.", float64(s.Pushbacks)),
		transportFigure("transport.retries", "{request}", c, "Retries the Transport sent: of 429s, and of attempts that timed out.", float64(s.Retries)),
		transportFigure("transport.retries_answered_late", "{request}", c, "Retries of a timed-out attempt never sent: its late answer came while they waited, and was the call's.", float64(s.RetriesAnsweredLate)),
		transportFigure("transport.retries_over_budget", "{request}", c, "Retries not sent because the retry budget was spent (WithRetryBudget).", float64(s.RetriesOverBudget)),
		transportFigure("transport.header_errors", "{header}", c, "Rate-limit headers the Transport could not read.", float64(s.HeaderErrors)),
		transportFigure("transport.attempts", "{attempt}", c, "Attempts on the wire: requests sent plus the base's own re-sends.", float64(s.Attempts)),
		transportFigure("transport.resends", "{attempt}", c, "Times the base sent a request again by itself, each with a token of its own.", float64(s.Resends)),
		transportFigure("transport.errors_unwritten", "{attempt}", c, "Attempts that failed before their request was written; their token went back unused.", float64(s.ErrorsUnwritten)),
		transportFigure("transport.errors_after_write", "{attempt}", c, "Attempts that failed after their request may have been written.", float64(s.ErrorsAfterWrite)),
		transportFigure("transport.held_past_error", "{token}", c, "Tokens held past their attempt's error, for the in-flight bound.", float64(s.HeldPastError)),
		transportFigure("transport.holding_past_error", "{token}", ud, "Tokens held past their error now, waiting for the in-flight bound.", float64(s.HoldingPastError)),
		transportFigure("transport.attempt_timeouts", "{attempt}", c, "Attempts ended by WithAttemptTimeout.", float64(s.AttemptTimeouts)),
		transportFigure("transport.late_answers", "{attempt}", c, "Given-up attempts whose late answer released their token before the bound.", float64(s.LateAnswers)),
		transportFigure("transport.peer_closes", "{attempt}", c, "Attempts whose connection the peer closed or reset after writing: their token released then.", float64(s.PeerCloses)),
		transportFigure("transport.refused_streams", "{attempt}", c, "HTTP/2 attempts the server refused unprocessed (REFUSED_STREAM, above a GOAWAY's last stream): their token released then.", float64(s.RefusedStreams)),
		transportFigure("transport.resets", "{connection}", c, "Connections the Transport closed as a reset (SO_LINGER 0) when it gave up on an attempt.", float64(s.Resets)),
		transportFigure("transport.kept_open", "{attempt}", ud, "Attempts kept open now after their caller gave up.", float64(s.KeptOpen)),
	}
}

// Figures returns the numbers of the snapshot, of Source "transport" (a
// learning Transport's), for an exporter (rxthrottle.Figures).
// learn.last_rate is the rate of the tightest limit the latest change set,
// in requests per second: the limit learned last, of whichever key.
func (s LearnStats) Figures() []rxthrottle.Figure {
	c := rxthrottle.FigureCounter
	rate := 0.0
	for i, l := range s.Last.Limits {
		if r := float64(l.N) / l.Window.Seconds(); l.Window > 0 && (i == 0 || r < rate) {
			rate = r
		}
	}
	return []rxthrottle.Figure{
		transportFigure("learn.changes", "{change}", c, "Times a learned schedule's limits were set.", float64(s.Changes)),
		transportFigure("learn.not_applied", "{quota}", c, "Announced quotas left out: another unit, a quota of 0, an unusable window.", float64(s.NotApplied)),
		transportFigure("learn.refusals", "{response}", c, "429 responses the learner saw.", float64(s.Refusals)),
		transportFigure("learn.buckets", "{bucket}", rxthrottle.FigureUpDown, "Server-named bucket schedules kept now.", float64(s.Buckets)),
		transportFigure("learn.last_rate", "{request}/s", rxthrottle.FigureGauge, "Rate of the tightest limit the latest learned change set, in requests per second (0 before the first).", rate),
	}
}

// transportFigure is a Figure of Source "transport" (a Transport's, a
// learning Transport's).
func transportFigure(name, unit string, k rxthrottle.FigureKind, help string, v float64) rxthrottle.Figure {
	return rxthrottle.Figure{Source: "transport", Name: name, Help: help, Kind: k, Unit: unit, Value: v}
}
