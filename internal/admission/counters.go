package admission

import "time"

// Counters are the counts a front keeps for a limiter's Stats: the
// callers admitted, how many of them waited and for how long, the waits
// cancelled (or refused by their deadline), the callers refused by the
// queue bound and those failed by the limiter's store (redisstore's). The
// zero Counters have counted nothing. They are guarded by the limiter's
// lock.
type Counters struct {
	Admitted, Waited, Cancelled, Refused, Failed uint64
	TotalWait, MaxWait                           time.Duration
}

// Admit counts an admission after a wait of wait (0 for a caller that went
// at once).
func (c *Counters) Admit(wait time.Duration) {
	c.Admitted++
	if wait > 0 {
		c.Waited++
		c.TotalWait += wait
		c.MaxWait = max(c.MaxWait, wait)
	}
}

// Cancel counts a caller that ended without its tokens: its wait was
// cancelled, or its deadline refused it at arrival.
func (c *Counters) Cancel() { c.Cancelled++ }

// Refuse counts a caller refused by the queue bound.
func (c *Counters) Refuse() { c.Refused++ }

// Fail counts a caller that ended with an error of the limiter's store.
func (c *Counters) Fail() { c.Failed++ }

// Unadmit turns an admission into a cancellation, for tokens given back
// unused (an operator's item never emitted).
func (c *Counters) Unadmit() {
	c.Admitted--
	c.Cancelled++
}
