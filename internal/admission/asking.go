package admission

import "sync"

// Asking is the front of a planner that answers after a round trip
// (redisstore's group commit: a schedule's window). Such a planner
// cannot tell at a caller's arrival whether it goes at once or waits:
// FreeAt is Never until the store answers, and the store judges
// deadlines (Earliest is Unknown). It knows only whether callers ahead of
// it wait with no answer of the store to come (redisstore's line of
// callers blocked by held tokens, its adaptive cap): behind them, a
// caller waits for sure. So the front decides the arrival on that
// (DecideAsk: wait, refused by the queue bound, or ask the store), and
// the store's answer decides the rest: a caller goes at once, or learns
// that it waits (a departure ahead, blocked by held tokens, too late for
// its deadline), and only then is it counted waiting and told (Wait,
// which queues its OnWait). The queue bound reads that count (Waiters):
// the callers known to wait, wherever they wait, from the decision or
// answer that made them wait until they are done. The zero Asking is
// empty. It is guarded by the limiter's lock.
type Asking[E any] struct {
	Front
	waiting int // the callers counted waiting (Wait), until they Leave
}

// Asker is one caller of an Asking front across all its asks (a caller
// may ask the store several times: behind a caller of higher priority,
// after a late answer, blocked by held tokens): whether the front counts
// it waiting, and its OnWait call, queued (Calls) when the front counts
// it and made by the caller once it releases the lock (Unlock). The zero
// Asker is not counted. It is guarded by the limiter's lock; its caller
// alone changes it.
type Asker[E any] struct {
	waits bool
	calls Calls[E]
}

// Waits reports whether the front counts c waiting. Only c's caller
// changes it, so that caller may read it without the lock.
func (c *Asker[E]) Waits() bool { return c.waits }

// Unlock releases mu, which guards c and is held, and then makes c's
// queued calls with run (Calls.Unlock).
func (c *Asker[E]) Unlock(mu *sync.Mutex, run func(Call[E])) { c.calls.Unlock(mu, run) }

// Waiters returns the callers counted waiting: the count the queue bound
// reads.
func (f *Asking[E]) Waiters() int { return f.waiting }

// DecideAsk decides on the arrival of caller c, given bound, the queue
// bound (-1 for none), and behind, whether callers ahead of c wait with
// no answer of the store to come, so that c waits for sure. Behind them,
// c waits (Wait: the limiter queues it there and counts it, Wait), unless
// bound callers other than c are counted waiting already (Full: refused,
// consuming nothing; SPEC.md, "Queue bound"). Otherwise the store's
// answer decides (Ask); at the bound, c may go only at once (AskAtOnce):
// a caller that may go at once is never refused, and one the answer
// makes wait is refused as Full would. Neither Go nor Late comes of it:
// nothing here knows a caller may go before the store has answered, nor
// the earliest instant it could.
func (f *Asking[E]) DecideAsk(c *Asker[E], behind bool, bound int) Verdict {
	others := f.waiting
	if c.waits {
		others-- // it waited elsewhere first: at redisstore's adaptive cap
	}
	full := bound >= 0 && others >= bound
	switch {
	case behind && full:
		return Full
	case behind:
		return Wait
	case full:
		return AskAtOnce
	}
	return Ask
}

// Wait counts c waiting from now on, once, and queues the call of hook
// (if set) with ev, made once c's caller releases the lock (Unlock): the
// OnWait of a caller that learns it waits. It reports whether c was not
// counted before.
func (f *Asking[E]) Wait(c *Asker[E], hook func(E), ev E) bool {
	if c.waits {
		return false
	}
	c.waits = true
	f.waiting++
	c.calls.Add(hook, ev)
	return true
}

// Leave stops counting c waiting (its wait is over: it went, gave up,
// was refused or failed), and reports whether it was counted.
func (f *Asking[E]) Leave(c *Asker[E]) bool {
	if !c.waits {
		return false
	}
	c.waits = false
	f.waiting--
	return true
}
