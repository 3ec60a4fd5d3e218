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
// missing): the sentinels, and no expiry yet (x = 0). expireAt moves the
// keys' common expiry past horizon when it is not already: to horizon plus
// the largest window, or plus one second if that is longer, so that a busy
// schedule with short windows sets it at most about once a second.
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
  x = math.ceil((horizon + math.max(maxw, 1000000)) / 1000)
  for i = 1, 3 do redis.call('PEXPIREAT', KEYS[i], x) end
  redis.call('HSET', KEYS[3], 'x', x)
end
`

// admitScript runs a batch of admissions of SPEC.md's schedule atomically,
// in their order (the local arrival order of one process's callers: group
// commit), with held tokens, weights and spacing. Each is
//
//	d = max(now, pause, l + S, max over limits of (c*_(i-N) + W))
//
// where c* are the completions of the earlier tokens in time order, those
// of the batch's earlier admissions included. A held token has no
// completion yet: it counts as "later than any", so a caller that needs it
// is blocked (its time cannot be known) until the token is released or its
// lease deadline passes. In terms of counts: n tokens are free at t when
// (held tokens) + (known completions c with c + W > t) <= N - n, so
// t >= the (N - held - n + 1)-th latest known completion + W, and the
// caller is blocked if N - held - n < 0. Once one Wait or Acquire of the
// batch is blocked, the ones after it are too (they are behind it in FIFO
// order); an Allow that cannot go blocks nobody.
//
// KEYS: done, held, state. ARGV[1] is the number k of admissions; then
// three arguments each: "1" to record it only if the caller may go now
// (Allow) or "0" to reserve d whatever it is; n; the hold timeout in µs
// for held tokens (Acquire) or -1. Then the spacing S, the largest window
// (how long a departure can matter), and N and W of each limit.
//
// Expired holds complete at their deadline first (moved from held to
// done). Completions a window old (c + maxW <= now) are dropped lazily,
// whenever the id counter passes a multiple of 8. A lookup (ZREVRANGE, the
// dearest call) is skipped when it cannot bind: when done holds no more
// than N - held - n completions, or when the newest completion m is more
// than a window before d (m + W <= d). The state is written once per
// batch.
//
// It returns four integers per admission: {1, d, d-now, id} when admitted
// (the delay rather than now: usually 0, which go-redis decodes without an
// allocation); {0, d, d-now, 0} when Allow would have to wait (d = -1,
// delay 0 if blocked); {2, u, u-now, 0} when blocked by held tokens, u
// being the earliest lease deadline.
var admitScript = redis.NewScript(initLua + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'q', 'm', 'x')
local seq = init(st)
local seq0 = seq
local mc = tonumber(st[5]) or -1
local mc0 = mc
local held = redis.call('ZCARD', KEYS[2]) - 1
if held > 0 then
  local od = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES')
  if #od > 0 then
    for i = 1, #od, 2 do
      local c = tonumber(od[i + 1])
      redis.call('ZADD', KEYS[1], c, od[i])
      if c > mc then mc = c end
    end
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
    held = held - #od / 2
  end
end
local nd = redis.call('ZCARD', KEYS[1]) - 1
local k = tonumber(ARGV[1])
local base = 2 + 3 * k
local sp = tonumber(ARGV[base])
local maxw = tonumber(ARGV[base + 1])
local p = tonumber(st[1])
local last = tonumber(st[2])
local prev = st[4]
local out = {}
local blocked = nil
local horizon = -1
for r = 0, k - 1 do
  local allow = ARGV[2 + 3 * r] == '1'
  local n = tonumber(ARGV[3 + 3 * r])
  local hold = tonumber(ARGV[4 + 3 * r])
  local d = now
  if p and p > d then d = p end
  if last and last + sp > d then d = last + sp end
  local bl = blocked
  if not bl then
    for i = base + 2, #ARGV, 2 do
      local free = tonumber(ARGV[i]) - held - n
      if free < 0 then
        local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
        bl = tonumber(first[2])
        break
      end
      local w = tonumber(ARGV[i + 1])
      if free < nd and mc + w > d then
        local c = redis.call('ZREVRANGE', KEYS[1], free, free, 'WITHSCORES')
        if c[1] and c[1] ~= '_' then
          c = tonumber(c[2]) + w
          if c > d then d = c end
        end
      end
    end
  end
  if d > 9007199254740992 then d = 9007199254740992 end
  local o = #out
  if bl then
    if allow then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 0, -1, 0, 0
    else
      blocked = bl
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 2, bl, bl - now, 0
    end
  elseif allow and d > now then
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 0, d, d - now, 0
  else
    seq = seq + 1
    local key, score = KEYS[1], d
    if hold >= 0 then
      key, score = KEYS[2], d + hold
      if score > 9007199254740992 then score = 9007199254740992 end
      held = held + n
    else
      nd = nd + n
      if d > mc then mc = d end
    end
    if n == 1 then
      redis.call('ZADD', key, score, seq)
    else
      local args = {score, seq}
      for j = 2, n do
        args[#args + 1] = score
        args[#args + 1] = seq .. '.' .. j
      end
      redis.call('ZADD', key, unpack(args))
    end
    if score > horizon then horizon = score end
    prev, last = last or -1, d
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 1, d, d - now, seq
  end
end
if seq > seq0 then
  redis.call('HSET', KEYS[3], 'l', last, 'q', prev, 's', seq, 'm', mc)
  if math.floor(seq / 8) ~= math.floor(seq0 / 8) then
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '(-inf', now - maxw)
  end
  expireAt(st, horizon + maxw, maxw)
elseif mc ~= mc0 then
  redis.call('HSET', KEYS[3], 'm', mc)
end
return out
`)

// endScript ends the hold or the reservation of admission ARGV[1] (its id)
// of ARGV[2] tokens, departed (or to depart) at ARGV[3], held with the
// timeout ARGV[5] (µs). A token is only touched if its score is still the
// one that admission gave it (deadline d + timeout, or d): ids restart
// when an idle schedule expires, and a Token released long after its
// deadline must not end a later admission that got the same id. ARGV[4]
// says how:
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
local due = d + tonumber(ARGV[5])
if due > 9007199254740992 then due = 9007199254740992 end
local done = 0
local mc = -1
for k = 1, n do
  local m = id
  if k > 1 then m = id .. '.' .. k end
  local dl = tonumber(redis.call('ZSCORE', KEYS[2], m))
  if dl == due then
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
    local c = tonumber(redis.call('ZSCORE', KEYS[1], m))
    if c == d or c == due then
      done = done + redis.call('ZREM', KEYS[1], m)
    end
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
