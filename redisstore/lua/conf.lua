-- conf.lua: reads the stored configuration of a quota, KEYS[1] (a HASH:
-- v, l, s, h, k; config.go), storing ARGV's (limits, spacing, hold
-- timeout, concurrency cap: ARGV[2..5]) if there is none (or one without
-- every field, stored before the field was) or if ARGV[1] is "set"
-- (SetLimit); for "set", it also raises field c of the state hash
-- KEYS[2], if given and present, to the new version. A version is
-- Redis's now in µs, or one more than the previous version, whichever is
-- larger, so that versions only grow. It returns {v, l, s, h, k, now}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local c = redis.call('HMGET', KEYS[1], 'v', 'l', 's', 'h', 'k')
if ARGV[1] == 'set' or not c[1] or not c[2] or not c[3] or not c[4] or not c[5] then
  local v = math.max(now, (tonumber(c[1]) or 0) + 1)
  redis.call('HSET', KEYS[1], 'v', v, 'l', ARGV[2], 's', ARGV[3], 'h', ARGV[4], 'k', ARGV[5])
  if ARGV[1] == 'set' and KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
    redis.call('HSET', KEYS[2], 'c', v)
  end
  return {v, ARGV[2], ARGV[3], ARGV[4], ARGV[5], now}
end
return {tonumber(c[1]), c[2], c[3], c[4], c[5], now}
