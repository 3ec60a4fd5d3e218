package redisstore

import "github.com/redis/go-redis/v9"

// The state of one schedule is three keys under one hash tag (keys.go):
//
//	done   ZSET: the known completion of each token, member = token id,
//	       score = completion time. A Wait's token completes at its
//	       departure; a held token when it is released, or at its lease
//	       deadline.
//	held   ZSET: the tokens still held, member = token id, score = the
//	       lease deadline (departure + hold timeout).
//	state  HASH: p (pause until), l (at least the latest departure ever
//	       given: a cache, see below), s (the newest admission's id), m
//	       (at least the latest completion in done), h (at least the
//	       latest lease deadline in held), x (the keys' expiry, ms), k (1
//	       once done's sentinel is doneSentinel: see below), c (the
//	       newest configuration version admitted under: config.go), t
//	       (a Keyed limiter's key: the limits its schedule runs under
//	       under version c, "N/W,N/W": tiers.go).
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
// tokens has members "s", "s.2" ... "s.n". Each ZSET keeps a sentinel
// member (score -inf in done, +inf in held) so that neither is ever
// empty, and so never vanishes on its own: the three keys are created
// together (init below) and always share one expiry, set together. Any
// one of them may still be lost on its own (a DEL, an eviction that picks
// one key); batchScript then never lets more than N per window through:
// a lost state takes its ids on from the largest left in done and held
// (so no id is reused) and its times from their scores; a lost done or
// held is made again, and the schedule is paused until every token it
// may have held has renewed (m or h plus the largest window), which
// costs the quota that long but never breaks the window.
// The sentinel is "_", until done holds more than skiplistAt
// completions: then batchScript swaps done's for doneSentinel, longer
// than zset-max-listpack-value (64 bytes by default), and sets k. Redis
// keeps a ZSET of up to 128 short members as a listpack, in which adding
// a member scans and moves the whole list (a ZADD of 4 members into one
// of about 60 measured 6.5 µs, against 1.3 µs as a skiplist); a longer
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
// than 64 bytes.
const doneSentinel = "_ the sentinel of done, longer than 64 bytes so that Redis keeps it a skiplist"

// skiplistAt is the number of completions in done past which batchScript
// makes it a skiplist (see above), as batchLua spells it.
const skiplistAt = "32"

// initLua reads the state of a schedule (HMGET p l s m x k h, into st) and
// makes it whole. init returns the newest id and whether the state is to
// be written in full (fresh: the state hash was missing). A fresh
// schedule gets its sentinels and no expiry yet (x = 0); a state lost on
// its own (done or held still there) takes its ids on from the largest id
// left and its times from their scores (see above), rather than wipe the
// completions a window still counts. expireAt moves the keys' common
// expiry past horizon when it is not already: to horizon plus the largest
// window, or plus one second if that is longer, so that a busy schedule
// with short windows sets it at most about once a second. zadd adds the
// score-member pairs of a to the ZSET key, in calls of at most 1,000
// pairs (Lua's unpack has a limit).
const initLua = `
local SENTINEL = '` + doneSentinel + `'
local function init(st)
  if st[3] then return tonumber(st[3]), false end
  local seq = 0
  for k = 1, 2 do
    if redis.call('ZCARD', KEYS[k]) > 1 then
      for _, m in ipairs(redis.call('ZRANGE', KEYS[k], 0, -1)) do
        local v = tonumber(string.match(m, '^%d+'))
        if v and v > seq then seq = v end
      end
    end
  end
  if seq == 0 then
    redis.call('DEL', KEYS[1], KEYS[2])
    redis.call('ZADD', KEYS[1], '-inf', '_')
    redis.call('ZADD', KEYS[2], '+inf', '_')
    st[5], st[6] = false, false
    return 0, true
  end
  local z = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if z[2] and tonumber(z[2]) then st[2], st[4] = z[2], z[2] end
  z = redis.call('ZREVRANGEBYSCORE', KEYS[2], '(+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if z[2] then st[7] = z[2] end
  st[5] = false
  if redis.call('ZSCORE', KEYS[1], SENTINEL) then st[6] = '1' else st[6] = false end
  return seq, true
end
local function expireAt(st, horizon, maxw)
  local x = tonumber(st[5]) or 0
  if horizon <= x * 1000 then return end
  x = math.ceil((horizon + math.max(maxw, 1000000)) / 1000)
  for i = 1, 3 do redis.call('PEXPIREAT', KEYS[i], x) end
  redis.call('HSET', KEYS[3], 'x', x)
end
local function zadd(key, a)
  for i = 1, #a, 2000 do
    redis.call('ZADD', key, unpack(a, i, math.min(i + 1999, #a)))
  end
end
`

// batchScript runs a batch of operations on one schedule atomically, in
// their order (the local arrival order of one process's callers: group
// commit): admissions of SPEC.md's schedule with held tokens, weights and
// spacing, and the ends of earlier admissions (a release, an unused
// cancel, a withdrawal). Each admission departs at
//
//	d = max(now, pause, l + S, max over limits of (c*_(i-N) + W))
//
// where l is the latest live departure (see above: withdrawn ones are
// gone) and c* are the completions of the earlier tokens in time order,
// those of the batch's earlier admissions included. A held token has no
// completion yet: it counts as "later than any", so a caller that needs it
// is blocked (its time cannot be known) until the token is released or its
// lease deadline passes. In terms of counts: n tokens are free at t when
// (held tokens) + (known completions c with c + W > t) <= N - n, so
// t >= the (N - h - n + 1)-th latest known completion + W (h being the
// number of held tokens), and the caller is blocked if N - h - n < 0. Once
// one Wait or Acquire of the batch is blocked, the ones after it are too
// (they are behind it in FIFO order); an Allow that cannot go blocks
// nobody, and neither does a caller refused for its deadline.
//
// A caller with a deadline (its context's, sent as the time left, on
// Redis's clock from now: a little later than the true one, by the time
// the request took to arrive) is never reserved past it: a caller that
// cannot go by its deadline is as if it had never arrived (SPEC.md,
// "Cancellation"), so it holds nobody back. If its deadline is no later
// than the earliest instant it could possibly go (SPEC.md, "Deadlines":
// the pause and the window if every reservation ahead were withdrawn and
// every held token released now) it is refused; otherwise it is told when
// it would go, and waits unreserved until its context ends or this
// process frees a token.
//
// KEYS: done, held, state. ARGV: the number k of operations, the spacing
// S, the largest window (how long a departure can matter), the hold
// timeout, the number of limits and N and W of each, the configuration's
// version and when it was read (config.go: an admission of a process
// whose configuration is older than c, or was read more than confBound
// before now, is answered {5, now, 0, 0}, stale, and not made), the
// concurrency cap K (0: none; SPEC.md, "Concurrency": an Acquire is
// blocked while K holds are open or reserved, until one ends), the tier:
// "" (a Bucket), or the limits as encodeLimits spells them (a Keyed
// limiter's key, tiers.go: the first batch under a version records them
// as t; a batch under the same version with other limits admits nothing
// and answers each admission {7, t, 0, 0}, t a string); then the k
// operations, four arguments each: an admission is "1" to record it only
// if the caller may go now (Allow) or "0" to reserve d whatever it is, n,
// -1 or, for held tokens (Acquire), the hold timeout, and -1 or the time
// left before the caller's deadline; the end of an admission is
// "release", "cancel" or "withdraw", its id, its n and its departure d
// (endLua says what each does).
//
// Expired holds complete at their deadline first (moved from held to
// done; skipped when nothing is held). Completions a window old (c + maxW
// <= now) are dropped lazily, whenever the id counter passes a multiple
// of 16. A lookup (ZREVRANGE, the dearest call) is skipped when it cannot
// bind: when there are no more than N - h - n completions (ZCARD counts
// them: keeping counters in the state hash instead measured no cheaper,
// and made every release dearer), or when the newest one (at most m) is
// more than a window before d. Every completion a batch
// adds for a Wait is at least every completion before it (d >= now,
// and a release completes at now), so the batch keeps its own, oldest
// first, in pend, looks there first, and adds them all with one ZADD at
// the end; the state is written once, with one HSET of the fields that
// changed: l, s and m when only admissions were made (the common
// case, without building a table), or whichever changed (a fresh state is
// written, with its expiry, even if nothing was admitted). Before its
// ZADD, the first batch that finds more than skiplistAt completions in
// done swaps done's sentinel (see above): once in the schedule's life.
//
// It returns four integers per operation: for an admission {1, d, d-now,
// id} when admitted (the delay rather than now: usually 0, which go-redis
// decodes without an allocation); {0, d, d-now, 0} when Allow would have
// to wait (d = -1, delay 0 if blocked); {2, u, u-now, 0} when blocked by
// held tokens, u being the earliest lease deadline; {3, d, d-now, 0} when
// the caller would go at d, after its deadline (not reserved); {4, b,
// b-now, 0} when it is refused, b being the earliest instant it could
// possibly go. For an end {k, now, 0, 0}, k being the number of tokens it
// released or removed.
var batchScript = redis.NewScript(batchLua)

// batchLua is batchScript's source.
const batchLua = initLua + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'm', 'x', 'k', 'h', 'c', 't')
local seq, fresh = init(st)
local seq0 = seq
local p, l0, mq, hq = tonumber(st[1]), tonumber(st[2]), tonumber(st[4]) or -1, tonumber(st[7]) or -1
local p0, mq0, hq0, lmax = p, mq, hq, l0
local sp, maxw, ht = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local lo, hi = 6, 5 + 2 * tonumber(ARGV[5])
local cver, cread, cseen = tonumber(ARGV[hi + 1]), tonumber(ARGV[hi + 2]), tonumber(st[8]) or 0
local stale = now - cread > ` + confBoundLua + ` or cseen > cver
local tier = ARGV[hi + 4]
local mism = not stale and tier ~= '' and cver == cseen and st[9] and st[9] ~= tier
local pend, np, dz, hz, hmin = {}, 0, {}, {}, nil
local blocked, horizon = nil, -1
local MAX = 9007199254740992
local held, nd = redis.call('ZCARD', KEYS[2]) - 1, redis.call('ZCARD', KEYS[1]) - 1
local doneLost = false
if held < 0 or nd < 0 then
  if held < 0 then
    redis.call('ZADD', KEYS[2], '+inf', '_')
    held = 0
    if hq + maxw > now and (not p or p < hq + maxw) then p = hq + maxw end
  end
  if nd < 0 then
    redis.call('ZADD', KEYS[1], '-inf', '_')
    nd = 0
    if st[6] then redis.call('HDEL', KEYS[3], 'k') st[6] = false end
    if mq + maxw > now and (not p or p < mq + maxw) then p = mq + maxw end
  end
  if p and p > MAX then p = MAX end
  st[5] = false
  horizon = math.max(now, p or now)
end
if held > 0 then
` + expireLua + `
end
local tail, tailKnown, last, soon = l0, not (l0 and l0 > now), nil, nil
local out = {}
local K, hc = tonumber(ARGV[hi + 3]), nil
local i = hi + 5
for r = 1, tonumber(ARGV[1]) do
  local mode, o = ARGV[i], #out
  if mode == '0' or mode == '1' then
    local allow, n, hold, dl = mode == '1', tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    i = i + 4
    if stale then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 5, now, 0, 0
    elseif mism then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 7, st[9], 0, 0
    else
` + admitLua + `
    end
  elseif mode == 'lease' then
` + leaseLua + `
  elseif mode == 'lrep' then
    local k = 0
` + reportLua + `
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = k, now, 0, 0
  else
    local how, id, n, d = mode, ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    i = i + 4
` + endLua + `
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = k, now, 0, 0
  end
end
if not st[6] and nd + np > ` + skiplistAt + ` then
  redis.call('ZADD', KEYS[1], '-inf', SENTINEL)
  redis.call('ZREM', KEYS[1], '_')
  redis.call('HSET', KEYS[3], 'k', 1)
end
if #dz > 0 then zadd(KEYS[1], dz) end
if #hz > 0 then zadd(KEYS[2], hz) end
if math.floor(seq / 16) ~= math.floor(seq0 / 16) then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '(-inf', now - maxw)
end
if fresh or p ~= p0 or hq ~= hq0 or not lmax then
  local w = {}
  if lmax and (lmax ~= l0 or fresh) then w[#w + 1], w[#w + 2] = 'l', lmax end
  if p and (p ~= p0 or fresh) then w[#w + 1], w[#w + 2] = 'p', p end
  if seq ~= seq0 or fresh then w[#w + 1], w[#w + 2] = 's', seq end
  if mq ~= mq0 or fresh then w[#w + 1], w[#w + 2] = 'm', mq end
  if hq ~= hq0 or (fresh and hq >= 0) then w[#w + 1], w[#w + 2] = 'h', hq end
  if fresh and st[6] then w[#w + 1], w[#w + 2] = 'k', 1 end
  if #w > 0 then redis.call('HSET', KEYS[3], unpack(w)) end
elseif seq ~= seq0 or lmax ~= l0 or mq ~= mq0 then
  redis.call('HSET', KEYS[3], 'l', lmax, 's', seq, 'm', mq)
end
if stale or mism then
elseif cver > cseen and tier ~= '' then redis.call('HSET', KEYS[3], 'c', cver, 't', tier)
elseif cver > cseen then redis.call('HSET', KEYS[3], 'c', cver)
elseif tier ~= '' and not st[9] then redis.call('HSET', KEYS[3], 't', tier)
end
if fresh and horizon < 0 then horizon = now end
if horizon >= 0 then expireAt(st, horizon + maxw, maxw) end
return out
`

// pauseScript holds admissions back until ARGV[1] microseconds from Redis's
// now (saturated at maxTime), unless a later pause is already set, and
// keeps the keys until the pause ends; ARGV[2] is the largest window. It
// returns 1 if it moved the pause, 0 otherwise.
var pauseScript = redis.NewScript(initLua + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'm', 'x', 'k', 'h')
local seq, fresh = init(st)
local u = now + tonumber(ARGV[1])
if u > 9007199254740992 then u = 9007199254740992 end
local p = tonumber(st[1])
if p and p >= u then return 0 end
redis.call('HSET', KEYS[3], 'p', u, 's', seq)
if fresh then
  local w = {}
  if st[2] then w[#w + 1], w[#w + 2] = 'l', st[2] end
  if st[4] then w[#w + 1], w[#w + 2] = 'm', st[4] end
  if st[7] then w[#w + 1], w[#w + 2] = 'h', st[7] end
  if st[6] then w[#w + 1], w[#w + 2] = 'k', 1 end
  if #w > 0 then redis.call('HSET', KEYS[3], unpack(w)) end
end
expireAt(st, u, tonumber(ARGV[2]))
return 1
`)
