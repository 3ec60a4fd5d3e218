package admission

import "sync"

// Calls are the hook calls (OnWait, OnAdmit) a limiter decides under its
// lock and makes once the lock is released, so that user code never runs
// with the limiter's lock held: a hook may call back into the limiter, and
// one that blocks or panics cannot stall or corrupt it. The zero Calls
// hold none and allocate nothing until the first Add: only a limiter with
// hooks pays for the list. Calls are guarded by the limiter's lock.
type Calls[E any] struct {
	list *[]Call[E]
}

// Call is one call of a hook f with its event.
type Call[E any] struct {
	F  func(E)
	Ev E
}

// None reports whether no call was ever queued (the list is not made):
// the limiter may then release its lock without Unlock.
func (c *Calls[E]) None() bool { return c.list == nil }

// Add queues a call of f (if set) with ev.
func (c *Calls[E]) Add(f func(E), ev E) {
	if f == nil {
		return
	}
	if c.list == nil {
		c.list = new([]Call[E])
	}
	*c.list = append(*c.list, Call[E]{f, ev})
}

// Unlock releases mu, which guards c and is held, and then makes the
// queued calls with run, in the order they were queued.
func (c *Calls[E]) Unlock(mu *sync.Mutex, run func(Call[E])) {
	if c.list == nil {
		mu.Unlock()
		return
	}
	switch calls := *c.list; len(calls) {
	case 0:
		mu.Unlock()
	case 1: // the common case, keeping the buffer
		one := calls[0]
		calls[0] = Call[E]{}
		*c.list = calls[:0]
		mu.Unlock()
		run(one)
	default:
		*c.list = nil
		mu.Unlock()
		for _, call := range calls {
			run(call)
		}
	}
}

// Take hands the queued calls to a limiter that releases its lock itself
// (one that holds another lock too) and forgets them.
func (c *Calls[E]) Take() []Call[E] {
	if c.list == nil || len(*c.list) == 0 {
		return nil
	}
	calls := *c.list
	*c.list = nil
	return calls
}
