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
-- never stale). A lost runs (runsLost: its tokens counted, the key
-- gone) is left for the next batch.lua to make again, with a pause that
-- covers m, as a lost done is; a report here still counts its runs' tokens
-- in r, so that it finds it lost.

--#include schedule.lua

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
-- st[5] is x, the keys' expiry, as in batch.lua (report.lua reads it).
local st = redis.call('HMGET', KEYS[3], 's', 'm', 'e', 'r', 'x')
local out = {}
if not st[1] then
  for r = 1, tonumber(ARGV[1]) do out[4 * r - 3], out[4 * r - 2], out[4 * r - 1], out[4 * r] = 0, now, 0, 0 end
  return out
end
local mq = tonumber(st[2]) or -1
local e, rw = tonumber(st[3]) or 0, tonumber(st[4]) or 0
local mq0, e0, rw0, held, nd, l0, tailKnown, soon, hc, rs = mq, e, rw, 0, 0, nil, true, nil, nil, nil
local ht, MAX = tonumber(ARGV[4]), 9007199254740992
local doneLost = redis.call('EXISTS', KEYS[1]) == 0
local runsLost = rw > 0 and redis.call('EXISTS', KEYS[4]) == 0
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
local w = {}
if mq ~= mq0 then w[#w + 1], w[#w + 2] = 'm', mq end
if e ~= e0 then w[#w + 1], w[#w + 2] = 'e', e end
if rw ~= rw0 then w[#w + 1], w[#w + 2] = 'r', rw end
if #w > 0 then redis.call('HSET', KEYS[3], unpack(w)) end
return out
