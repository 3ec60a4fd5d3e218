package redisstore

import (
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// counters are a limiter's local statistics: what this process's callers
// did, counted as the root's limiters count them (internal/admission's
// Counters), and the callers in the limiter now. The shared state (how
// many tokens are free across processes) is in Redis and costs a round
// trip to read, so Stats does not report it.
type counters struct {
	mu     sync.Mutex
	c      front.Counters
	queued int
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
	c.c.Refuse()
	c.mu.Unlock()
}

// fail counts a caller that ended with a *StoreError (FailClosed).
func (c *counters) fail() {
	c.mu.Lock()
	c.c.Fail()
	c.mu.Unlock()
}

// cancel counts a caller that ended without its tokens.
func (c *counters) cancel() {
	c.mu.Lock()
	c.c.Cancel()
	c.mu.Unlock()
}

// admit counts an admitted caller that spent w in the limiter (the round
// trip included); waited says it had to wait for a token or a pause (a
// caller that did not counts no wait, however long its round trip).
func (c *counters) admit(w time.Duration, waited bool) {
	if !waited {
		w = 0
	}
	c.mu.Lock()
	c.c.Admit(w)
	c.mu.Unlock()
}

func (c *counters) snapshot() rxthrottle.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return rxthrottle.Stats{
		Admitted:  c.c.Admitted,
		Waited:    c.c.Waited,
		Cancelled: c.c.Cancelled,
		Refused:   c.c.Refused,
		Failed:    c.c.Failed,
		TotalWait: c.c.TotalWait,
		MaxWait:   c.c.MaxWait,
		Queued:    c.queued,
	}
}
