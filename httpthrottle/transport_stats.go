package httpthrottle

// TransportStats counts what a Transport did since it was built.
type TransportStats struct {
	// Sent is the number of requests handed to the base RoundTripper,
	// retries included.
	Sent uint64
	// Cancelled is the number of attempts that were not sent: their
	// context ended before they went, the limiter refused them (their
	// deadline comes before their token could, rxthrottle.ErrDeadline; its
	// queue is full, rxthrottle.ErrQueueFull; a keyed limiter has too many
	// keys, rxthrottle.ErrTooManyKeys), a retry's body could not be
	// made again, a re-send of the base found no token, or a retry's wait
	// ended because the attempt before it answered late.
	Cancelled uint64
	// Failed is the number of attempts not sent because the limiter
	// failed: it returned an error while their context was live that is
	// none of its refusals, such as a shared store's outage (redisstore's
	// *StoreError under FailClosed, which the limiter's Stats count in
	// rxthrottle.Stats.Failed) or any other error of a Limiter. Apart
	// from Cancelled, so that an outage of the store shows apart from
	// callers that gave up.
	Failed uint64
	// Pushbacks is the number of responses that paused the limiter.
	Pushbacks uint64
	// Retries is the number of retries the Transport sent (up to
	// WithMaxAttempts, DefaultMaxAttempts by default): of 429 responses, and of attempts that timed out
	// (WithAttemptTimeout).
	Retries uint64
	// RetriesAnsweredLate is the number of retries of a timed-out attempt
	// that were never sent because that attempt's late answer came while
	// they waited for their token: the late answer was the call's.
	RetriesAnsweredLate uint64
	// RetriesOverBudget is the number of retries not sent because the
	// retry budget was spent (WithRetryBudget).
	RetriesOverBudget uint64
	// HeaderErrors is the number of reports made to OnHeaderError.
	HeaderErrors uint64

	// Attempts is the number of attempts on the wire: Sent plus Resends.
	Attempts uint64
	// Resends is the number of times the base sent a request again by
	// itself, inside one RoundTrip, after an attempt that may have reached
	// the server (net/http does, for an idempotent request on a reused
	// connection that dropped). Each took a token of its own.
	Resends uint64
	// ErrorsUnwritten is the number of attempts that failed before their
	// request was written (no connection, or its headers never went): the
	// token went back unused.
	ErrorsUnwritten uint64
	// ErrorsAfterWrite is the number of attempts that failed after their
	// request may have been written (a timeout, a reset, a context ended
	// in flight, a connection dropped before the answer): the request may
	// still arrive at the server.
	ErrorsAfterWrite uint64
	// HeldPastError is the number of those whose token was held past the
	// error, for the in-flight bound (WithInFlightBound). It is less than
	// ErrorsAfterWrite with departure renewal or a bound of 0.
	HeldPastError uint64
	// HoldingPastError is the number of tokens held past their error right
	// now, waiting for the in-flight bound to pass.
	HoldingPastError int64
	// AttemptTimeouts is the number of attempts ended by WithAttemptTimeout.
	AttemptTimeouts uint64
	// LateAnswers is the number of attempts whose caller gave up but whose
	// answer came later, within the bound: their tokens were released at
	// the answer, not at the bound (WithMaxKeptOpen).
	LateAnswers uint64
	// PeerCloses is the number of attempts whose connection the peer
	// closed or reset after their request was written: their tokens were
	// released then, not at the bound (WithStrictInFlightBound).
	PeerCloses uint64
	// RefusedStreams is the number of HTTP/2 attempts the server refused
	// unprocessed, which net/http then sent again by itself (REFUSED_STREAM,
	// a stream above a GOAWAY's last stream): their tokens were released
	// then, with or without a proxy. Another reset of a stream is held as
	// any error after writing.
	RefusedStreams uint64
	// Resets is the number of connections the Transport closed as a reset
	// (SO_LINGER 0) when it gave up on an attempt.
	Resets uint64
	// KeptOpen is the number of attempts open right now after their
	// caller gave up.
	KeptOpen int64
}

// Stats returns a snapshot of the Transport's counters. The limiter's own
// counters (admitted, waited, total wait) are in its Stats.
func (t *Transport) Stats() TransportStats {
	h := t.holds.Stats()
	s := TransportStats{
		Sent:                t.sent.Load(),
		Cancelled:           t.cancelled.Load(),
		Failed:              t.failed.Load(),
		Pushbacks:           t.pushbacks.Load(),
		Retries:             t.retries.Load(),
		RetriesOverBudget:   t.overBudget.Load(),
		RetriesAnsweredLate: t.lateAnswered.Load(),
		HeaderErrors:        t.headerErrors.Load(),
		Resends:             t.resends.Load(),
		ErrorsUnwritten:     t.unwritten.Load(),
		ErrorsAfterWrite:    h.AfterWrite,
		HeldPastError:       h.Held,
		HoldingPastError:    h.Holding,
		AttemptTimeouts:     t.attemptTimeouts.Load(),
		LateAnswers:         t.lateAnswers.Load(),
		PeerCloses:          t.peerCloses.Load(),
		RefusedStreams:      t.refusedStreams.Load(),
		Resets:              t.resets.Load(),
		KeptOpen:            t.keptOpen.Now(),
	}
	s.Attempts = s.Sent + s.Resends
	return s
}
