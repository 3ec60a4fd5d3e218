package guard

import (
	"context"
	"time"
)

// Store keeps the per-key state of a Guard: the memory store of this package
// (the default, see NewMemoryStore) or a store shared by several processes,
// such as the Redis store of package redisstore. A Guard makes exactly one
// Hit per Check, so a store that runs Hit as one atomic operation (a mutex, a
// Lua script) enforces the policy exactly under concurrent use.
//
// A store keeps one state per key whatever the policy: guards that share a
// store must use disjoint keys (for example a prefix per guard).
type Store interface {
	// Hit records one request of key under policy p and returns the
	// decision for it. It must behave as if it ran atomically with respect
	// to every other Hit on the same key, and follow these rules exactly,
	// where a key's state is either absent, counting (count, windowEnd) or
	// blocked (count, until):
	//
	//  1. State whose end (windowEnd when counting, until when blocked) is
	//     at or before now is absent: at exactly its end a key is fresh.
	//  2. Absent: the request is allowed and starts a window; the state
	//     becomes counting (1, now+p.Limit.Window). Result{Allowed: true,
	//     Count: 1, Reset: p.Limit.Window}.
	//  3. Counting with count < p.Limit.N: the request is allowed; count
	//     grows by one. Result{Allowed: true, Count: count,
	//     Reset: windowEnd-now} with the new count.
	//  4. Counting with count >= p.Limit.N: the request is refused and blocks
	//     the key; the state becomes blocked (count+1, until) with
	//     until = max(now+p.Block, windowEnd). Result{Allowed: false,
	//     Blocked: true, Count: count+1, Reset: until-now}.
	//  5. Blocked: the request is refused and changes nothing (refused
	//     requests neither count nor extend the block).
	//     Result{Allowed: false, Count: count, Reset: until-now}.
	//
	// now is the Guard's clock reading for this request. A store shared by
	// several processes may read its own clock instead (so that clock skew
	// between processes cannot stretch or shrink a window); it must then
	// apply the rules above at its own time, and Reset stays a duration, so
	// no absolute time crosses this interface.
	//
	// The store may forget a key once its state is absent by rule 1 (a
	// Redis store sets a TTL of Reset; the memory store evicts lazily).
	// Hit is called with p valid (see Policy.Validate) and key not empty.
	// An error means no decision could be made (the Guard reports it and
	// counts it in Stats.Errors); it must not be returned for a refusal.
	Hit(ctx context.Context, key string, p Policy, now time.Time) (Result, error)
}

// Result is a Store's answer to one Hit; see Store for the exact rules.
type Result struct {
	// Allowed reports whether the request may go.
	Allowed bool
	// Blocked reports that this very request went over the limit and
	// started the key's block (rule 4). It is true once per block.
	Blocked bool
	// Count is the number of requests counted in the key's current window
	// after this one: the allowed ones, plus the one that went over the
	// limit once the key is blocked.
	Count int
	// Reset is how long from now until the key's window ends (when
	// counting) or its block ends (when blocked). It is positive.
	Reset time.Duration
}

// KeyCounter is implemented by stores that can count their keys cheaply;
// Guard.Stats reports KeysLive and KeysBlocked from it (and 0 for a store
// that does not implement it).
type KeyCounter interface {
	// Keys returns the number of keys whose state is not absent at now
	// (see Store), and how many of them are blocked.
	Keys(now time.Time) (live, blocked int)
}
