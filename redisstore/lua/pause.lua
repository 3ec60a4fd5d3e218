-- pause.lua: holds a schedule's admissions back until ARGV[1]
-- microseconds from Redis's now (saturated at maxTime, times.go), unless
-- a later pause is already set, and keeps the keys until the pause ends;
-- ARGV[2] is the largest window. KEYS are batch.lua's. It returns 1 if it
-- moved the pause, 0 otherwise.

--#include schedule.lua
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'm', 'x', 'k', 'h', 'c', 't', 'e', 'r')
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
  if st[10] and st[10] > 0 then w[#w + 1], w[#w + 2] = 'e', st[10] end
  if st[11] and st[11] > 0 then w[#w + 1], w[#w + 2] = 'r', st[11] end
  if #w > 0 then redis.call('HSET', KEYS[3], unpack(w)) end
end
expireAt(st, u, tonumber(ARGV[2]))
return 1
