package grpcthrottle

// Stats counts what an Interceptor did since it was built. Its names are
// those of httpthrottle.TransportStats where they mean the same.
type Stats struct {
	// Sent is the number of RPC attempts (and, with WithTokenPerMessage,
	// stream messages) handed to gRPC with a token.
	Sent uint64
	// Cancelled is the number that were not sent: their context ended
	// before they went, or the limiter refused them (their deadline comes
	// before their token could, rxthrottle.ErrDeadline; its queue is full,
	// rxthrottle.ErrQueueFull; a keyed limiter has too many keys,
	// rxthrottle.ErrTooManyKeys).
	Cancelled uint64
	// Failed is the number not sent because the limiter failed: it
	// returned an error while their context was live that is none of its
	// refusals, such as a shared store's outage (redisstore's *StoreError
	// under FailClosed, which the limiter's Stats count in
	// rxthrottle.Stats.Failed) or any other error of a Limiter. Apart from
	// Cancelled, so that an outage of the store shows apart from callers
	// that gave up.
	Failed uint64
	// Pushbacks is the number of answers that paused the limiter.
	Pushbacks uint64
	// Retries is the number of RESOURCE_EXHAUSTED answers retried.
	Retries uint64
	// RetriesOverBudget is the number of retries not made because the
	// retry budget was spent (WithRetryBudget).
	RetriesOverBudget uint64
	// PushbackErrors is the number of reports made to OnBadPushback.
	PushbackErrors uint64

	// ErrorsUnwritten is the number of RPCs (and messages) that failed
	// before their request was written, as the StatsHandler tells: the
	// token went back unused.
	ErrorsUnwritten uint64
	// ErrorsAfterWrite is the number of RPCs that failed without an answer
	// after their request may have been written: the request may still
	// arrive at the server.
	ErrorsAfterWrite uint64
	// HeldPastError is the number of those whose token was held past the
	// error, for the in-flight bound (WithInFlightBound). It is less than
	// ErrorsAfterWrite with a bound of 0.
	HeldPastError uint64
	// HoldingPastError is the number of tokens held past their error right
	// now, waiting for the in-flight bound to pass.
	HoldingPastError int64

	// LateAnswers is the number of RPCs given up by their caller whose
	// token was released when the server was done with them: their late
	// answer came, or the server reset their stream (at its end of the
	// deadline), before the in-flight bound.
	LateAnswers uint64
	// PeerCloses is the number of RPCs that failed after their request
	// was written, or were given up by their caller, whose token was
	// released when the server closed or reset their connection, before
	// the bound (not with WithStrictInFlightBound).
	PeerCloses uint64
	// KeptOpen is the number of RPCs kept open right now after their
	// caller gave up (WithMaxKeptOpen caps it).
	KeptOpen int64
	// KeptOpenTotal is the number of RPCs kept open after their caller
	// gave up, in all; each ends in LateAnswers, PeerCloses or the bound.
	// The other given-up RPCs (not yet written when their caller gave up,
	// or beyond the cap) are cancelled, and their token held for the bound
	// if they may have been written.
	KeptOpenTotal uint64
}

// Stats returns a snapshot of the Interceptor's counters. The limiter's
// own counters (admitted, waited, total wait) are in its Stats.
func (i *Interceptor) Stats() Stats {
	h := i.holds.Stats()
	return Stats{
		Sent:              i.sent.Load(),
		Cancelled:         i.cancelled.Load(),
		Failed:            i.failed.Load(),
		Pushbacks:         i.pushbacks.Load(),
		Retries:           i.retries.Load(),
		RetriesOverBudget: i.overBudget.Load(),
		PushbackErrors:    i.pushbackErrors.Load(),
		ErrorsUnwritten:   i.unwritten.Load(),
		ErrorsAfterWrite:  h.AfterWrite,
		HeldPastError:     h.Held,
		HoldingPastError:  h.Holding,
		LateAnswers:       i.lateAnswers.Load(),
		PeerCloses:        i.peerCloses.Load(),
		KeptOpen:          i.keptOpen.Now(),
		KeptOpenTotal:     i.keptOpenTotal.Load(),
	}
}
