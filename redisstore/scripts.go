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
//	state  HASH: p (pause until), l (the newest departure), q (the one
//	       before it), s (the newest admission's id), m (the latest
//	       completion in done), x (the keys' expiry, ms).
//
// A token id is the admission's sequence number s; an admission of n > 1
// tokens has members "s", "s.2" ... "s.n". Each ZSET keeps a sentinel
// member "_" (score -inf in done, +inf in held) so that neither is ever
// empty, and so never vanishes on its own: the three keys are created
// together (init below) and always share one expiry, set together, so the
// sequence in state never restarts while ids of an older run are left.
//
// Times are integers in microseconds on Redis's clock (TIME), at most
// maxTime (2^53, times.go), which Lua numbers hold exactly. Numbers passed
// to redis.call are formatted with %.17g, which keeps every digit.

// initLua creates the state of a fresh schedule (st[3], its id, is
// missing): the sentinels, and no expiry yet (x = 0).
const initLua = `
local function init(st)
  if st[3] then return tonumber(st[3]) end
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('ZADD', KEYS[1], '-inf', '_')
  redis.call('ZADD', KEYS[2], '+inf', '_')
  st[6] = false
  return 0
end
local function expireAt(st, horizon, maxw)
  local x = tonumber(st[6]) or 0
  if horizon <= x * 1000 then return end
  x = math.ceil((horizon + maxw) / 1000)
  for i = 1, 3 do redis.call('PEXPIREAT', KEYS[i], x) end
  redis.call('HSET', KEYS[3], 'x', x)
end
`

// admitScript runs one admission of SPEC.md's schedule atomically, with
// held tokens, weights and spacing:
//
//	d = max(now, pause, l + S, max over limits of (c*_(i-N) + W))
//
// where c* are the completions of the earlier tokens in time order. A
// held token has no completion yet: it counts as "later than any", so a
// caller that needs it is blocked (its time cannot be known) until the
// token is released or its lease deadline passes. In terms of counts: n
// tokens are free at t when (held tokens) + (known completions c with
// c + W > t) <= N - n, so t >= the (N - held - n + 1)-th latest known
// completion + W, and the caller is blocked if N - held - n < 0.
//
// KEYS: done, held, state. ARGV[1] is "1" to record the admission only if
// the caller may go now (Allow), "0" to reserve d whatever it is; ARGV[2]
// is n; ARGV[3] the hold timeout in µs for a held token (Acquire), or -1;
// ARGV[4] the spacing S; ARGV[5] the largest window; then N and W of each
// limit.
//
// Expired holds complete at their deadline first (moved from held to
// done). Completions a window old (c + maxW <= now) are dropped lazily,
// every 8th admission. When the newest completion m is more than a window
// before d (m + W <= d), no completion can bind that limit and its lookup
// is skipped.
//
// It returns {1, d, d-now, id} when admitted (the delay rather than now:
// usually 0, which go-redis decodes without an allocation); {0, d, d-now,
// 0} when Allow would have to wait (d = -1 if blocked); {2, u, u-now, 0}
// when blocked by held tokens, u being the earliest lease deadline.
var admitScript = redis.NewScript(initLua + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'q', 'm', 'x')
local seq = init(st)
local od = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES')
local mc = tonumber(st[5]) or -1
if #od > 0 then
  for i = 1, #od, 2 do
    local c = tonumber(od[i + 1])
    redis.call('ZADD', KEYS[1], c, od[i])
    if c > mc then mc = c end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  redis.call('HSET', KEYS[3], 'm', mc)
end
local held = redis.call('ZCARD', KEYS[2]) - 1
local n = tonumber(ARGV[2])
local d = now
local p = tonumber(st[1])
if p and p > d then d = p end
local last = tonumber(st[2])
if last then
  last = last + tonumber(ARGV[4])
  if last > d then d = last end
end
for i = 6, #ARGV, 2 do
  local free = tonumber(ARGV[i]) - held - n
  if free < 0 then
    if ARGV[1] == '1' then return {0, -1, 0, 0} end
    local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    local u = tonumber(first[2])
    return {2, u, u - now, 0}
  end
  local w = tonumber(ARGV[i + 1])
  if mc + w > d then
    local r = redis.call('ZREVRANGE', KEYS[1], free, free, 'WITHSCORES')
    if r[1] and r[1] ~= '_' then
      local c = tonumber(r[2]) + w
      if c > d then d = c end
    end
  end
end
if d > 9007199254740992 then d = 9007199254740992 end
if d > now and ARGV[1] == '1' then
  return {0, d, d - now, 0}
end
seq = seq + 1
local maxw = tonumber(ARGV[5])
local hold = tonumber(ARGV[3])
local key, score = KEYS[1], d
if hold >= 0 then
  key, score = KEYS[2], d + hold
  if score > 9007199254740992 then score = 9007199254740992 end
elseif d > mc then
  mc = d
  redis.call('HSET', KEYS[3], 'm', mc)
end
if n == 1 then
  redis.call('ZADD', key, score, seq)
else
  local args = {score, seq}
  for k = 2, n do
    args[#args + 1] = score
    args[#args + 1] = seq .. '.' .. k
  end
  redis.call('ZADD', key, unpack(args))
end
redis.call('HSET', KEYS[3], 'l', d, 'q', st[2] or -1, 's', seq)
if seq % 8 == 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '(-inf', now - maxw)
end
expireAt(st, score + maxw, maxw)
return {1, d, d - now, seq}
`)

// endScript ends the hold or the reservation of admission ARGV[1] (its id)
// of ARGV[2] tokens, departed (or to depart) at ARGV[3]. ARGV[4] says how:
//
//	"release"  the work is done: each token still held completes at
//	           Redis's now (not before its departure, not after its
//	           deadline) and moves from held to done;
//	"cancel"   a held token given back unused: each token still held and
//	           within its lease is removed, as if never admitted;
//	"withdraw" a caller that gave up before its departure: its tokens
//	           are removed wherever they are (held or done).
//
// A token past its lease deadline is left to complete at the deadline
// (except by "withdraw", which removes it wherever it is). If
// the admission is still the newest and a token was removed, the newest
// departure goes back to the one before it, so the next caller is
// scheduled as if the admission had never been made. It returns the
// number of tokens it released or removed, and Redis's now.
var endScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local id, n, d, how = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local done = 0
local mc = -1
for k = 1, n do
  local m = id
  if k > 1 then m = id .. '.' .. k end
  local dl = redis.call('ZSCORE', KEYS[2], m)
  if dl then
    dl = tonumber(dl)
    if dl > now or how == 'withdraw' then
      redis.call('ZREM', KEYS[2], m)
      if how == 'release' then
        local c = now
        if c < d then c = d end
        redis.call('ZADD', KEYS[1], c, m)
        if c > mc then mc = c end
      end
      done = done + 1
    end
  elseif how == 'withdraw' then
    done = done + redis.call('ZREM', KEYS[1], m)
  end
end
if done == 0 then return {0, now} end
if mc >= 0 then
  local cur = tonumber(redis.call('HGET', KEYS[3], 'm')) or -1
  if mc > cur then redis.call('HSET', KEYS[3], 'm', mc) end
elseif redis.call('HGET', KEYS[3], 's') == id then
  local q = tonumber(redis.call('HGET', KEYS[3], 'q'))
  if q and q >= 0 then
    redis.call('HSET', KEYS[3], 'l', q)
  else
    redis.call('HDEL', KEYS[3], 'l')
  end
end
return {done, now}
`)

// pauseScript holds admissions back until ARGV[1] microseconds from Redis's
// now (saturated at maxTime), unless a later pause is already set, and
// keeps the keys until the pause ends; ARGV[2] is the largest window. It
// returns 1 if it moved the pause, 0 otherwise.
var pauseScript = redis.NewScript(initLua + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'q', 'm', 'x')
local seq = init(st)
local u = now + tonumber(ARGV[1])
if u > 9007199254740992 then u = 9007199254740992 end
local p = tonumber(st[1])
if p and p >= u then return 0 end
redis.call('HSET', KEYS[3], 'p', u, 's', seq)
expireAt(st, u, tonumber(ARGV[2]))
return 1
`)
