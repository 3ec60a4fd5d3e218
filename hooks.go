package rxthrottle

import (
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/kit"
)

// Event describes one caller or item at a hook (OnWait, OnAdmit).
type Event struct {
	// Key is the caller's key for a keyed limiter, "" otherwise.
	Key string
	// Arrived is when the caller reached the limiter.
	Arrived time.Time
	// Wait is how long the caller waited (OnAdmit) or 0 (OnWait).
	Wait time.Duration
	// N is the number of tokens the caller asked for (1 unless WaitN,
	// AcquireN or AllowN).
	N int
}

// hooks are the settings a bucket shares with the other keys of its shard
// in a Keyed limiter: the user callbacks of OnWait and OnAdmit, the counters
// they all add to, the hold timeout, the spacing, the cap on holds open and
// the bound on the queue.
type hooks struct {
	clock clock.Clock
	// realClock says clock is the real clock (clock.New()), which a Bucket
	// reads with time.Since (bucket_clock.go).
	realClock bool
	// base is the reading of clock that a bucket's window offsets count
	// from (with the real clock's monotonic part): the bucket's creation
	// for a Bucket, the limiter's for every key of a Keyed. Next to
	// realClock, since every call reads both (bucket_clock.go).
	base            time.Time
	onWait, onAdmit func(Event)
	agg             *aggregate // the shard's counts, where its keys' entries count (keyEntry); nil outside Keyed
	holdTimeout     time.Duration
	spacing         time.Duration
	concurrency     int // WithConcurrency's cap on open holds; 0 for none
	// WithAdaptiveConcurrency's bounds; 0 for none. The cap itself is each
	// bucket's (holdLog.adapt).
	adaptMin, adaptMax int
	// queueRoom is 1 + WithMaxQueue's bound on waiters, 0 for none, so that
	// the zero hooks are unbounded.
	queueRoom int
}

// hookCall is one call of a user hook, decided under a bucket's lock and
// made after it is released (admission.Calls).
type hookCall = admission.Call[Event]

// queueHookLocked notes a call of f (if set) to be made once the lock is
// released. Requires b.mu.
func (b *Bucket) queueHookLocked(f func(Event), ev Event) { b.calls.Add(f, ev) }

// unlock releases b.mu and then makes the hook calls queued under it
// (admission.Calls says why).
func (b *Bucket) unlock() { b.calls.Unlock(&b.mu.Mutex, callHook) }

// runHooks makes hook calls taken from a Bucket's queue (keyEntry's
// takeCallsLocked), with no lock held.
func runHooks(calls []hookCall) {
	for _, c := range calls {
		callHook(c)
	}
}

// callHook runs the hook, recovering and logging a panic in it (see
// kit.CallHook).
func callHook(c hookCall) { kit.CallHook(c.F, c.Ev, c.Ev.Key) }
