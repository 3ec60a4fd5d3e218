package grpcthrottle

import "github.com/rxthrottle/rxthrottle"

// Figures returns the numbers of the snapshot, of Source "interceptor",
// for an exporter (rxthrottle.Figures): rxprom and rxotel export them
// without importing gRPC.
func (s Stats) Figures() []rxthrottle.Figure {
	c := rxthrottle.FigureCounter
	return []rxthrottle.Figure{
		grpcFigure("grpc.sent", "{rpc}", c, "RPC attempts (and, per message, stream messages) handed to gRPC with a token.", float64(s.Sent)),
		grpcFigure("grpc.cancelled", "{rpc}", c, "RPC attempts not sent: their context ended first, or the limiter refused them.", float64(s.Cancelled)),
		grpcFigure("grpc.failed", "{rpc}", c, "RPC attempts not sent because the limiter failed (a shared store's outage).", float64(s.Failed)),
		grpcFigure("grpc.pushbacks", "{response}", c, "Answers that paused the limiter.", float64(s.Pushbacks)),
		grpcFigure("grpc.retries", "{rpc}", c, "RESOURCE_EXHAUSTED answers retried.", float64(s.Retries)),
		grpcFigure("grpc.retries_over_budget", "{rpc}", c, "Retries not made because the retry budget was spent (WithRetryBudget).", float64(s.RetriesOverBudget)),
		grpcFigure("grpc.pushback_errors", "{response}", c, "Reports made to OnBadPushback.", float64(s.PushbackErrors)),
		grpcFigure("grpc.errors_unwritten", "{rpc}", c, "RPCs that failed before their request was written; their token went back unused.", float64(s.ErrorsUnwritten)),
		grpcFigure("grpc.errors_after_write", "{rpc}", c, "RPCs that failed without an answer after their request may have been written.", float64(s.ErrorsAfterWrite)),
		grpcFigure("grpc.held_past_error", "{token}", c, "Tokens held past their RPC's error, for the in-flight bound.", float64(s.HeldPastError)),
		grpcFigure("grpc.holding_past_error", "{token}", rxthrottle.FigureUpDown, "Tokens held past their error now, waiting for the in-flight bound.", float64(s.HoldingPastError)),
		grpcFigure("grpc.late_answers", "{rpc}", c, "Given-up RPCs whose late answer (or the server's reset of their stream) released their token before the bound.", float64(s.LateAnswers)),
		grpcFigure("grpc.peer_closes", "{rpc}", c, "RPCs whose connection the server closed or reset after writing: their token released then.", float64(s.PeerCloses)),
		grpcFigure("grpc.kept_open", "{rpc}", rxthrottle.FigureUpDown, "RPCs kept open now after their caller gave up.", float64(s.KeptOpen)),
		grpcFigure("grpc.given_up_kept_open", "{rpc}", c, "RPCs kept open after their caller gave up, in all.", float64(s.KeptOpenTotal)),
	}
}

func grpcFigure(name, unit string, k rxthrottle.FigureKind, help string, v float64) rxthrottle.Figure {
	return rxthrottle.Figure{Source: "interceptor", Name: name, Help: help, Kind: k, Unit: unit, Value: v}
}
