package httpthrottle

import "github.com/rxthrottle/rxthrottle"

// Figures returns the numbers of the snapshot, of Source "transport", for
// an exporter (rxthrottle.Figures).
func (s TransportStats) Figures() []rxthrottle.Figure {
	c := rxthrottle.FigureCounter
	return []rxthrottle.Figure{
		transportFigure("transport.sent", "{request}", c, "Requests handed to the base RoundTripper, retries included.", s.Sent),
		transportFigure("transport.cancelled", "{request}", c, "Requests that failed while waiting for a token and were not sent.", s.Cancelled),
		transportFigure("transport.pushbacks", "{response}", c, "Responses (429, 503, quota headers) that paused the limiter.", s.Pushbacks),
		transportFigure("transport.retries", "{request}", c, "Retries the Transport sent: of 429s, and of attempts that timed out.", s.Retries),
		transportFigure("transport.retries_answered_late", "{request}", c, "Retries of a timed-out attempt never sent: its late answer came while they waited, and was the call's.", s.RetriesAnsweredLate),
		transportFigure("transport.retries_over_budget", "{request}", c, "Retries not sent because the retry budget was spent (WithRetryBudget).", s.RetriesOverBudget),
		transportFigure("transport.header_errors", "{header}", c, "Rate-limit headers the Transport could not read.", s.HeaderErrors),
		transportFigure("transport.attempts", "{attempt}", c, "Attempts on the wire: requests sent plus the base's own re-sends.", s.Attempts),
		transportFigure("transport.resends", "{attempt}", c, "Times the base sent a request again by itself, each with a token of its own.", s.Resends),
		transportFigure("transport.errors_unwritten", "{attempt}", c, "Attempts that failed before their request was written; their token went back unused.", s.ErrorsUnwritten),
		transportFigure("transport.errors_after_write", "{attempt}", c, "Attempts that failed after their request may have been written.", s.ErrorsAfterWrite),
		transportFigure("transport.held_past_error", "{token}", c, "Tokens held past their attempt's error, for the in-flight bound.", s.HeldPastError),
		{Source: "transport", Name: "transport.holding_past_error", Unit: "{token}", Kind: rxthrottle.FigureUpDown,
			Help: "Tokens held past their error now, waiting for the in-flight bound.", Value: float64(s.HoldingPastError)},
		transportFigure("transport.attempt_timeouts", "{attempt}", c, "Attempts ended by WithAttemptTimeout.", s.AttemptTimeouts),
		transportFigure("transport.late_answers", "{attempt}", c, "Given-up attempts whose late answer released their token before the bound.", s.LateAnswers),
		transportFigure("transport.peer_closes", "{attempt}", c, "Attempts whose connection the peer closed or reset after writing: their token released then.", s.PeerCloses),
		transportFigure("transport.refused_streams", "{attempt}", c, "HTTP/2 attempts the server refused unprocessed (REFUSED_STREAM, above a GOAWAY's last stream): their token released then.", s.RefusedStreams),
		transportFigure("transport.resets", "{connection}", c, "Connections the Transport closed as a reset (SO_LINGER 0) when it gave up on an attempt.", s.Resets),
		{Source: "transport", Name: "transport.kept_open", Unit: "{attempt}", Kind: rxthrottle.FigureUpDown,
			Help: "Attempts kept open now after their caller gave up.", Value: float64(s.KeptOpen)},
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
		transportFigure("learn.changes", "{change}", c, "Times a learned schedule's limits were set.", s.Changes),
		transportFigure("learn.not_applied", "{quota}", c, "Announced quotas left out: another unit, a quota of 0, an unusable window.", s.NotApplied),
		transportFigure("learn.refusals", "{response}", c, "429 responses the learner saw.", s.Refusals),
		{Source: "transport", Name: "learn.buckets", Unit: "{bucket}", Kind: rxthrottle.FigureUpDown,
			Help: "Server-named bucket schedules kept now.", Value: float64(s.Buckets)},
		{Source: "transport", Name: "learn.last_rate", Unit: "{request}/s", Kind: rxthrottle.FigureGauge,
			Help: "Rate of the tightest limit the latest learned change set, in requests per second (0 before the first).", Value: rate},
	}
}

func transportFigure(name, unit string, k rxthrottle.FigureKind, help string, v uint64) rxthrottle.Figure {
	return rxthrottle.Figure{Source: "transport", Name: name, Help: help, Kind: k, Unit: unit, Value: float64(v)}
}
