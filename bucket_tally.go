package rxthrottle

import (
	"time"

	"github.com/rxthrottle/rxthrottle/internal/admission"
)

// tally is where a Bucket counts its callers for Stats and what its hook
// events name: a Bucket's own counters (bucketCounts), or, for a Keyed
// limiter's key, the key's entry (keyEntry), which counts into its shard and
// its processor's stripe and names the key. The Bucket itself then knows
// nothing of keys. Every method requires the bucket's lock.
type tally interface {
	// admit counts an admission after a wait of wait (0: it went at once).
	admit(wait time.Duration)
	// unadmit turns an admission into a cancellation (tokens given back).
	unadmit()
	// cancel counts a caller that ended without its tokens.
	cancel()
	// refuse counts a caller refused by the queue bound.
	refuse()
	// queued adds delta callers to the queue gauge; edge says the queue
	// just went from empty to non-empty (delta > 0) or back (delta < 0).
	queued(delta int64, edge bool)
	// eventKey is the Key of the bucket's hook events.
	eventKey() string
}

// bucketCounts is a Bucket's own tally: its counters, read by Stats.
type bucketCounts struct{ admission.Counters }

var _ tally = (*bucketCounts)(nil)

func (c *bucketCounts) admit(wait time.Duration) { c.Admit(wait) }
func (c *bucketCounts) unadmit()                 { c.Unadmit() }
func (c *bucketCounts) cancel()                  { c.Cancel() }
func (c *bucketCounts) refuse()                  { c.Refuse() }
func (c *bucketCounts) queued(int64, bool)       {} // Stats reads the front's queue
func (c *bucketCounts) eventKey() string         { return "" }

// ownCounts returns the bucket's own counters, or nil for a Keyed's key.
func (b *Bucket) ownCounts() *admission.Counters {
	if c, ok := b.tally.(*bucketCounts); ok {
		return &c.Counters
	}
	return nil
}
