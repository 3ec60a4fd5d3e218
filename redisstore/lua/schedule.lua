-- schedule.lua: what every script of a schedule shares (batch.lua and
-- pause.lua include it first). The state of a schedule is three keys,
-- KEYS[1] done, KEYS[2] held, KEYS[3] state: see scripts.go for their
-- format. The constants (SENTINEL, ...) come from Go: lua.go,
-- "go:constants".

--#include go:constants

-- init reads the state of a schedule (HMGET p l s m x k h, into st) and
-- makes it whole. It returns the newest id and whether the state is to be
-- written in full (fresh: the state hash was missing). A fresh schedule
-- gets its sentinels and no expiry yet (x = 0); a state lost on its own
-- (done or held still there) takes its ids on from the largest id left
-- and its times from their scores (scripts.go), rather than wipe the
-- completions a window still counts.
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

-- expireAt moves the keys' common expiry past horizon when it is not
-- already: to horizon plus the largest window, or plus one second if that
-- is longer, so that a busy schedule with short windows sets it at most
-- about once a second.
local function expireAt(st, horizon, maxw)
  local x = tonumber(st[5]) or 0
  if horizon <= x * 1000 then return end
  x = math.ceil((horizon + math.max(maxw, 1000000)) / 1000)
  for i = 1, 3 do redis.call('PEXPIREAT', KEYS[i], x) end
  redis.call('HSET', KEYS[3], 'x', x)
end

-- zadd adds the score-member pairs of a to the ZSET key, in calls of at
-- most 1,000 pairs (Lua's unpack has a limit).
local function zadd(key, a)
  for i = 1, #a, 2000 do
    redis.call('ZADD', key, unpack(a, i, math.min(i + 1999, #a)))
  end
end
