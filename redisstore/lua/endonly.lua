-- endonly.lua: a batch made of ends only (end.lua: a Release, a Cancel or
-- a withdrawal, usually of a caller alone, and a lease's reports,
-- report.lua): what batch.lua would do with them, for less. It reads only
-- the state fields an end needs (not the sizes of the ZSETs: held and nd
-- are counted by end.lua but not used; it asks only whether done exists,
-- see end.lua), and does not complete expired leases first (an end leaves
-- a token past its lease deadline alone: the next admission completes it
-- at the deadline). A schedule whose state is gone (expired with its
-- tokens) has nothing to end. KEYS, ARGV and the reply are batch.lua's
-- (the limits and the configuration's version are not read: an end is
-- never stale).

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 's', 'm')
local out = {}
if not st[1] then
  for r = 1, tonumber(ARGV[1]) do out[4 * r - 3], out[4 * r - 2], out[4 * r - 1], out[4 * r] = 0, now, 0, 0 end
  return out
end
local mq = tonumber(st[2]) or -1
local mq0, held, nd, l0, tailKnown, soon, hc = mq, 0, 0, nil, true, nil, nil
local ht, MAX = tonumber(ARGV[4]), 9007199254740992
local doneLost = redis.call('EXISTS', KEYS[1]) == 0
local i = 10 + 2 * tonumber(ARGV[5])
for r = 1, tonumber(ARGV[1]) do
  local o = #out
  if ARGV[i] == 'lrep' then
    local k = 0
--#include report.lua
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = k, now, 0, 0
  else
    local how, id, n, d = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    i = i + 4
--#include end.lua
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = k, now, 0, 0
  end
end
if mq ~= mq0 then redis.call('HSET', KEYS[3], 'm', mq) end
return out
