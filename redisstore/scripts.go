package redisstore

// The state of one schedule is four keys under one hash tag (keys.go):
//
//	done   ZSET: the known completion of each token, member = token id,
//	       score = completion time. A Wait's token completes at its
//	       departure; a held token when it is released, or at its lease
//	       deadline.
//	held   ZSET: the tokens still held, member = token id, score = the
//	       lease deadline (departure + hold timeout); a lease (WithLease)
//	       is one member "s:r" for all its tokens, r being the tokens it
//	       still holds.
//	state  HASH: p (pause until), l (at least the latest departure ever
//	       given: a cache, see below), s (the newest admission's id), m
//	       (at least the latest completion in done or runs), h (at least
//	       the latest lease deadline in held), x (the keys' expiry, ms), k
//	       (1 once done's sentinel is doneSentinel: see below), c (the
//	       newest configuration version admitted under: config.go), t (a
//	       Keyed limiter's key: the limits its schedule runs under under
//	       version c, "N/W,N/W": tiers.go), e (the tokens of held's lease
//	       members beyond one each), r (the tokens in runs).
//	runs   ZSET: the completions of leased tokens, a member for each run
//	       of tokens that complete at one instant, "s:j:w" (w tokens of
//	       lease s from its token j; j = 0 for those its deadline
//	       completed), score = their completion (lua/runs.lua). Only a
//	       Bucket with leases makes it.
//
// So a lease costs Redis a member of held, and each run of its tokens
// used (a 50th of the smallest window, at most: lease.go) a member of
// runs, however many tokens: the held tokens are held's members (less
// the sentinel) plus e, the completions a window counts are done's plus
// runs' weights, and the k-th latest completion, where runs have tokens,
// is found by a binary search over the runs a window can reach.
//
// FIFO is derived from the live reservations, not kept: a caller departs
// no earlier than the latest departure still reserved, which is the
// latest score in done if it is later than now (every completion at or
// before now is a departure that has come, or a release or an expired
// lease, all at or before now), or the latest lease deadline in held
// less the hold timeout, whichever is later. A withdrawn reservation is
// gone from both, so it holds nobody back (SPEC.md, "Cancellation": as if
// it had never arrived), whichever reservation it was. l only saves the
// two lookups when no reservation can be later than now (l <= now), and
// is the base of the spacing when no reservation is: the spacing may then
// count from a withdrawn departure, at most S after it.
//
// A token id is the admission's sequence number s; an admission of n > 1
// tokens has members "s", "s.2" ... "s.n". done and held keep a sentinel
// member (score -inf in done, +inf in held) so that neither is ever
// empty, and so never vanishes on its own: the keys are created together
// (init below; runs with its first run, with their expiry) and always
// share one expiry, set together. A runs that is gone while r counts
// tokens is lost. Any one of them may still be lost on its own (a DEL, an
// eviction that picks one key); batch.lua then never lets more than N
// per window through: a lost state takes its ids on from the largest
// left in done, held and runs (so no id is reused), its times from their
// scores and e and r from their members; a lost done, held or runs is
// made again, and the schedule is paused until every token it may have
// held has renewed (m or h plus the largest window), which costs the
// quota that long but never breaks the window.
// The sentinel is "_", until done holds more than skiplistAt
// completions: then batch.lua swaps done's for doneSentinel, longer
// than zset-max-listpack-value (64 bytes by default), and sets k. Redis
// keeps a ZSET of up to 128 short members as a listpack, in which adding
// a member scans and moves the whole list (several times slower than into
// a skiplist: BENCHMARKS.md, "done as a skiplist"); a longer
// member makes it convert the ZSET to a skiplist, which it never converts
// back, so a busy schedule's done stays a skiplist until its keys expire.
// A skiplist costs about 1 KB more per ZSET and 100 B per member instead
// of 12, hence the threshold: a schedule that keeps few completions (most
// keys of a large Keyed limiter) stays small.
//
// Times are integers in microseconds on Redis's clock (TIME), at most
// maxTime (2^53, times.go), which Lua numbers hold exactly. Numbers passed
// to redis.call are formatted with %.17g, which keeps every digit; the
// scripts format none themselves (the ids of the second and later tokens
// of an admission aside).

// doneSentinel is the sentinel member of a done ZSET that holds, or has
// held, more than skiplistAt completions: see above for why it is longer
// than 64 bytes (SENTINEL in the scripts).
const doneSentinel = "_ the sentinel of done, longer than 64 bytes so that Redis keeps it a skiplist"

// skiplistAt is the number of completions in done past which batch.lua
// makes it a skiplist (see above; SKIPLIST_AT in the scripts).
const skiplistAt = 32

// The scripts, composed from lua/ (lua.go); each file's header says what
// it does, with its KEYS, ARGV and reply.
var (
	// batchScript runs a batch of operations on one schedule, in their
	// order: admissions, the ends of earlier ones, a lease's operations
	// (lua/batch.lua).
	batchScript = luaScript("batch.lua")
	// endScript runs a batch made of ends only, for less (lua/endonly.lua).
	endScript = luaScript("endonly.lua")
	// pauseScript holds a schedule's admissions back (lua/pause.lua).
	pauseScript = luaScript("pause.lua")
	// confScript reads, or stores, a quota's configuration (lua/conf.lua,
	// config.go).
	confScript = luaScript("conf.lua")
	// guardScript runs one guard.Store Hit (lua/guard.lua, guard_store.go).
	guardScript = luaScript("guard.lua")
)
