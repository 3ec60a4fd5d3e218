-- guard.lua: one guard.Store Hit, atomically (GuardStore.Hit,
-- guard_store.go), following the rules on guard.Store (guard/store.go)
-- exactly. The state of a key is one HASH:
-- n (count), s and ns (the end of the window while counting, of the
-- block while blocked, as Unix seconds and nanoseconds) and b ("1" when
-- blocked). Times are (seconds, nanoseconds) pairs: a Unix time in
-- nanoseconds does not fit in a Lua number exactly, a pair does.
--
-- The classic design counts with INCR and then sets EXPIRE in a second
-- call, which leaves a counter that never expires when the client dies in
-- between; here the count and its expiry change in one script, so they
-- cannot part. The rules do not rely on the TTL, only on the stored end,
-- which is exact to the nanosecond; the TTL (the Reset, in milliseconds
-- rounded up) only lets Redis forget a key once its state is absent, never
-- sooner. With the caller's time, the Reset is measured on the caller's
-- clock, which need not run with Redis's (a test's virtual clock, a slow
-- caller): the TTL is then at least one second of Redis's time, so that a
-- key is not forgotten while the caller's clock has not reached its end.
--
-- KEYS[1] is the key's HASH. ARGV is limit, window (s, ns), block (s,
-- ns), then optionally now (s, ns); without it, now is Redis's TIME. It
-- returns {allowed, blocked, count, reset s, reset ns}.
local G = 1000000000
local nowS, nowN
if ARGV[6] then
  nowS, nowN = tonumber(ARGV[6]), tonumber(ARGV[7])
else
  local t = redis.call('TIME')
  nowS, nowN = tonumber(t[1]), tonumber(t[2]) * 1000
end
local function after(aS, aN, bS, bN)
  return aS > bS or (aS == bS and aN > bN)
end
local function add(aS, aN, bS, bN)
  local s, n = aS + bS, aN + bN
  if n >= G then return s + 1, n - G end
  return s, n
end
local function untilNow(s, n)
  s, n = s - nowS, n - nowN
  if n < 0 then return s - 1, n + G end
  return s, n
end
local function f(x) return string.format('%d', x) end
-- store writes the state and its TTL (the Reset in milliseconds, rounded
-- up; at least a second with the caller's time, whose clock need not run
-- with Redis's) and returns the time from now to its end.
local function store(count, s, n, blocked)
  redis.call('HSET', KEYS[1], 'n', f(count), 's', f(s), 'ns', f(n), 'b', blocked)
  local rs, rn = untilNow(s, n)
  local ttl = rs * 1000 + math.ceil(rn / 1000000)
  if ARGV[6] and ttl < 1000 then ttl = 1000 end
  redis.call('PEXPIRE', KEYS[1], f(ttl))
  return rs, rn
end

local st = redis.call('HMGET', KEYS[1], 'n', 's', 'ns', 'b')
local count = tonumber(st[1])
local endS, endN = tonumber(st[2]), tonumber(st[3])
-- Rule 1: a state whose end is at or before now is absent.
if count and not after(endS, endN, nowS, nowN) then count = nil end
if not count then
  -- Rule 2: start a window.
  endS, endN = add(nowS, nowN, tonumber(ARGV[2]), tonumber(ARGV[3]))
  local rs, rn = store(1, endS, endN, '0')
  return {1, 0, 1, rs, rn}
end
local rs, rn = untilNow(endS, endN)
if st[4] == '1' then
  -- Rule 5: blocked; refused, nothing changes.
  return {0, 0, count, rs, rn}
end
if count < tonumber(ARGV[1]) then
  -- Rule 3: counted; the TTL already ends with the window.
  count = redis.call('HINCRBY', KEYS[1], 'n', 1)
  return {1, 0, count, rs, rn}
end
-- Rule 4: over the limit; block until max(now + block, window end).
local uS, uN = add(nowS, nowN, tonumber(ARGV[4]), tonumber(ARGV[5]))
if after(endS, endN, uS, uN) then uS, uN = endS, endN end
rs, rn = store(count + 1, uS, uN, '1')
return {0, 1, count + 1, rs, rn}
