package httpthrottle

// TransportStats counts what a Transport did since it was built.
type TransportStats struct {
	// Sent is the number of requests handed to the base RoundTripper,
	// retries included.
	Sent uint64
	// Cancelled is the number of attempts that were not sent: their
	// context ended before they went, the limiter failed, or a retry's
	// body could not be made again.
	Cancelled uint64
	// Pushbacks is the number of responses that paused the limiter.
	Pushbacks uint64
	// Retries is the number of 429 responses the Transport retried.
	Retries uint64
	// HeaderErrors is the number of reports made to OnHeaderError.
	HeaderErrors uint64
}

// Stats returns a snapshot of the Transport's counters. The limiter's own
// counters (admitted, waited, total wait) are in its Stats.
func (t *Transport) Stats() TransportStats {
	return TransportStats{
		Sent:         t.sent.Load(),
		Cancelled:    t.cancelled.Load(),
		Pushbacks:    t.pushbacks.Load(),
		Retries:      t.retries.Load(),
		HeaderErrors: t.headerErrors.Load(),
	}
}
