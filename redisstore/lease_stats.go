package redisstore

import "github.com/rxthrottle/rxthrottle"

// LeaseStats counts what a Bucket's leases (WithLease) did in this process
// since it was built. Its Stats count the same callers among the admitted:
// Leased over Stats.Admitted is the share of admissions that needed no
// round trip of their own (the lease hit rate).
type LeaseStats struct {
	// Leased is the number of this process's callers admitted from a
	// lease, as Bucket.Leased returns it.
	Leased uint64
}

// LeaseStats returns a snapshot of the Bucket's lease counters; the zero
// LeaseStats for a Bucket without WithLease.
func (b *Bucket) LeaseStats() LeaseStats { return LeaseStats{Leased: b.Leased()} }

// Figures returns the numbers of the snapshot, of Source "limiter" (the
// Bucket's, beside its Stats), for an exporter (rxthrottle.Figures).
func (s LeaseStats) Figures() []rxthrottle.Figure {
	return []rxthrottle.Figure{{
		Source: "limiter", Name: "leased", Unit: "{caller}", Kind: rxthrottle.FigureCounter,
		Help:  "Callers admitted from a lease (redisstore.WithLease), without a round trip of their own; counted in admitted too.",
		Value: float64(s.Leased),
	}}
}
