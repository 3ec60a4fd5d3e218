package redisstore

import "time"

// HoldTimeout returns how long a token from Acquire may stay held before
// it completes at its lease deadline: the schedule's, which is the stored
// configuration's once this process has followed it (another process's
// WithHoldTimeout or SetLimit), else the constructor's.
//
// rxthrottle.ThrottleMapWith reads it to end fn's context when the token
// it paid with can no longer be counted as held, as it does for an
// in-memory Bucket; without it the operator would assume
// rxthrottle.DefaultHoldTimeout, and a call could outlive a shorter lease
// and reach the server after its token had renewed.
func (b *Bucket) HoldTimeout() time.Duration {
	return time.Duration(b.s.lim.Load().hold) * time.Microsecond
}
