package attempt

import "sync/atomic"

// An attempt whose caller gave up may be kept open behind it, until the
// server is done with it (SPEC.md, "Requests on the wire"): each adapter
// runs such an attempt on a goroutine of its own (Go) and caps how many are
// kept open (KeptOpen), in the same way.

// Outcome is what a call that Go ran returned, or the panic it raised.
type Outcome[T any] struct {
	Value T
	Err   error
	// Panicked is the value the call panicked with, or Go's exited for a
	// call that ended its goroutine otherwise (runtime.Goexit); nil if it
	// returned.
	Panicked any
}

// Go calls f on a goroutine of its own and returns a channel that yields
// its Outcome once. A panic is recovered into the Outcome, for the caller
// to raise again on its own goroutine: the goroutine Go starts must not
// crash the program where the caller's could have recovered.
func Go[T any](f func() (T, error), exited any) <-chan Outcome[T] {
	done := make(chan Outcome[T], 1)
	go func() {
		r := Outcome[T]{Panicked: exited}
		defer func() {
			if p := recover(); p != nil {
				r.Panicked = p
			}
			done <- r
		}()
		r.Value, r.Err = f()
		r.Panicked = nil
	}()
	return done
}

// KeptOpen counts the attempts kept open after their callers gave up, up
// to a cap (WithMaxKeptOpen). The zero KeptOpen is ready to use; it is safe
// for concurrent use.
type KeptOpen struct {
	n atomic.Int64
}

// Keep takes a place for one more attempt kept open if fewer than max are,
// and reports whether it did; Done gives the place back.
func (k *KeptOpen) Keep(max int) bool {
	if k.n.Add(1) > int64(max) {
		k.n.Add(-1)
		return false
	}
	return true
}

// Done gives back a place Keep took.
func (k *KeptOpen) Done() { k.n.Add(-1) }

// Now returns the number of places taken now.
func (k *KeptOpen) Now() int64 { return k.n.Load() }
