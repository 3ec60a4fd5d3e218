-- retrybudget.lua: counts a bucket's first attempts and retries against
-- its retry budget (attempt.RetryBudget; SPEC.md, "Retry budget") on
-- Redis's clock, for every process that shares the bucket. KEYS[1] and
-- KEYS[2] are sorted sets of the instants (microseconds) of the first
-- attempts and of the retries, KEYS[3] the counter that names their
-- members. ARGV[1] is "f" to record a first attempt or "r" to ask for a
-- retry, ARGV[2] the window in microseconds, ARGV[3] the ratio and ARGV[4]
-- the minimum. It returns 1 for a first attempt, and for a retry within
-- the budget, which it records: with it, the retries in the window up to
-- now are at most ratio x the first attempts in it + minimum; 0 for a
-- retry over the budget, which it does not record.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local w = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - w)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - w)
local ttl = math.ceil(w / 1000) + 1000
local function add(key)
  local id = redis.call('INCR', KEYS[3])
  redis.call('ZADD', key, now, id)
  redis.call('PEXPIRE', key, ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
end
if ARGV[1] == 'f' then
  add(KEYS[1])
  return 1
end
local f = redis.call('ZCARD', KEYS[1])
local r = redis.call('ZCARD', KEYS[2])
if r + 1 > tonumber(ARGV[3]) * f + tonumber(ARGV[4]) then return 0 end
add(KEYS[2])
return 1
