package guard

// Stats is a snapshot of a Guard's counters. Counters only grow; KeysLive and
// KeysBlocked describe the instant of the snapshot.
type Stats struct {
	// Checks is the number of calls to Check with a non-empty key.
	Checks uint64
	// Allowed and Refused count the decisions made; Errors counts the
	// checks the store could not decide. Once every Check has returned,
	// Checks = Allowed + Refused + Errors (a snapshot taken meanwhile reads
	// each counter at a slightly different instant).
	Allowed, Refused, Errors uint64
	// Blocks is the number of times a key was blocked.
	Blocks uint64
	// Full is the number of requests of new keys refused because the
	// store held its maximum of live keys (WithMaxKeys); they count in
	// Refused too.
	Full uint64
	// KeysLive is the number of keys with a window or block in force, and
	// KeysBlocked how many of them are blocked. Both are 0 when the store
	// does not implement KeyCounter.
	KeysLive, KeysBlocked int
}
