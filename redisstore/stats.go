package redisstore

import (
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// counters are a limiter's local statistics: what this process's callers
// did. The shared state (how many tokens are free across processes) is in
// Redis and costs a round trip to read, so Stats does not report it.
type counters struct {
	mu                                   sync.Mutex
	admitted, waited, cancelled, refused uint64
	totalWait, maxWait                   time.Duration
	queued                               int
}

func (c *counters) enter() {
	c.mu.Lock()
	c.queued++
	c.mu.Unlock()
}

func (c *counters) leave() {
	c.mu.Lock()
	c.queued--
	c.mu.Unlock()
}

// refuse counts a caller refused by the queue bound.
func (c *counters) refuse() {
	c.mu.Lock()
	c.refused++
	c.mu.Unlock()
}

func (c *counters) cancel() {
	c.mu.Lock()
	c.cancelled++
	c.mu.Unlock()
}

// admit counts an admitted caller that spent w in the limiter (the round
// trip included); waited says it had to wait for a token or a pause.
func (c *counters) admit(w time.Duration, waited bool) {
	c.mu.Lock()
	c.admitted++
	if waited {
		c.waited++
		c.totalWait += w
		c.maxWait = max(c.maxWait, w)
	}
	c.mu.Unlock()
}

func (c *counters) snapshot() rxthrottle.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return rxthrottle.Stats{
		Admitted:  c.admitted,
		Waited:    c.waited,
		Cancelled: c.cancelled,
		Refused:   c.refused,
		TotalWait: c.totalWait,
		MaxWait:   c.maxWait,
		Queued:    c.queued,
	}
}
