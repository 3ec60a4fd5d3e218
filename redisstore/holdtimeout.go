package redisstore

import "time"

// HoldTimeout returns how long a token from Acquire may stay held before
// it completes at its lease deadline: the schedule's, which is the stored
// configuration's once this process has followed it (another process's
// WithHoldTimeout or SetLimit), else the constructor's. With WithLease, it
// is what a token from a lease surely has left when Acquire returns it:
// the lease's deadline runs from the lease's grant, up to leaseAge (or
// half the hold timeout) before the token is handed out, and a stamp may
// be late by 0.1% of the time since (see the package doc, "Leases").
//
// rxthrottle.ThrottleMapWith reads it to end fn's context when the token
// it paid with can no longer be counted as held, as it does for an
// in-memory Bucket; without it the operator would assume
// rxthrottle.DefaultHoldTimeout, and a call could outlive a shorter lease
// and reach the server after its token had renewed.
func (b *Bucket) HoldTimeout() time.Duration {
	hold := time.Duration(b.s.lim.Load().hold) * time.Microsecond
	if b.pool == nil {
		return hold
	}
	return hold - min(leaseAge, hold/2) - hold/1000 - time.Microsecond
}

// HoldTimeout returns how long a token of Acquire may stay held before it
// completes at its lease deadline, as Bucket.HoldTimeout does (a Keyed has
// no lease pool). rxthrottle.ForKey's Limiter reports it, so that
// ThrottleWith, ThrottleChan and ThrottleMapWith over one key, and
// ThrottleByWith over k, act before a token can time out.
func (k *Keyed) HoldTimeout() time.Duration {
	return time.Duration(k.s.lim.Load().hold) * time.Microsecond
}
