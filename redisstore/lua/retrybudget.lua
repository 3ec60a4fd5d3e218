-- retrybudget.lua: counts a bucket's first attempts and retries against
-- its retry budget (attempt.RetryBudget; SPEC.md, "Retry budget") on
-- Redis's clock, for every process that shares the bucket, as
-- attempt.Budget does in memory. A retry at t goes only if, for every start
-- s in (t-W, t], R[s,t] + 1 <= ratio x F[s,t] + minimum: then every window
-- [s, s+W) of the admissions keeps to the budget, whatever comes later.
--
-- KEYS[1] is a hash of the counts: f and r, the first attempts and retries
-- ever counted; last, the latest instant counted (microseconds); lf and lr,
-- the counts before last. KEYS[2] is a list of the window starts that may
-- still be the worst, oldest first, each "instant f r" with the counts
-- before it: the instants of earlier retries whose r - ratio x f is lower
-- than every later one's (only a retry's instant, or t, can start the
-- worst window). ARGV[1] is "f" to count a first attempt or "r" to ask for
-- a retry, ARGV[2] the window in microseconds, ARGV[3] the ratio and
-- ARGV[4] the minimum. It returns {1, t} for a first attempt and for a
-- retry within the budget, which it counts, {0, t} for a retry over it,
-- which it does not; t is the instant counted (Redis's TIME, or the latest
-- instant already counted if TIME went back).

local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
local w = tonumber(ARGV[2])
local ratio = tonumber(ARGV[3])
local minimum = tonumber(ARGV[4])
local st = redis.call('HMGET', KEYS[1], 'f', 'r', 'last', 'lf', 'lr')
local f, r = tonumber(st[1]) or 0, tonumber(st[2]) or 0
local last, lf, lr = tonumber(st[3]), tonumber(st[4]) or 0, tonumber(st[5]) or 0
if last and now < last then now = last end
if not last or now > last then last, lf, lr = now, f, r end
-- The numbers go to Redis as integers written out: a Lua number becomes
-- a string of 14 digits only, and an instant has 16.
local function int(x) return string.format('%d', x) end
local ttl = math.ceil(w / 1000) + 1000
local function save()
  redis.call('HSET', KEYS[1], 'f', int(f), 'r', int(r), 'last', int(last), 'lf', int(lf), 'lr', int(lr))
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
if ARGV[1] == 'f' then
  f = f + 1
  save()
  return {1, now}
end
local function start(i)
  local s = redis.call('LINDEX', KEYS[2], i)
  if not s then return nil end
  local at, sf, sr = string.match(s, '^(%d+) (%d+) (%d+)$')
  return {at = tonumber(at), f = tonumber(sf), r = tonumber(sr)}
end
local front = start(0)
while front and front.at <= now - w do
  redis.call('LPOP', KEYS[2])
  front = start(0)
end
local function over(s) return (r - s.r) + 1 > ratio * (f - s.f) + minimum end
local here = {at = now, f = lf, r = lr}
if over(here) or (front and over(front)) then
  save()
  return {0, now}
end
local back = start(-1)
if not (back and back.at == now) then
  while back and (here.r - back.r) - ratio * (here.f - back.f) <= 0 do
    redis.call('RPOP', KEYS[2])
    back = start(-1)
  end
  redis.call('RPUSH', KEYS[2], int(now) .. ' ' .. int(lf) .. ' ' .. int(lr))
end
r = r + 1
save()
return {1, now}
