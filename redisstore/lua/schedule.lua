-- schedule.lua: what every script of a schedule shares (batch.lua and
-- pause.lua include it first). The state of a schedule is four keys,
-- KEYS[1] done, KEYS[2] held, KEYS[3] state, KEYS[4] runs: see scripts.go
-- for their format. The constants (SENTINEL, ...) come from Go: lua.go,
-- "go:constants".

--#include go:constants

-- init reads the state of a schedule (HMGET p l s m x k h c t e r, into
-- st) and makes it whole. It returns the newest id and whether the state
-- is to be written in full (fresh: the state hash was missing). A fresh
-- schedule gets its sentinels and no expiry yet (x = 0); a state lost on
-- its own (done, held or runs still there) takes its ids on from the
-- largest id left, its times from their scores (m: the latest of done's
-- and runs', so that no completion a window counts is later than m), and
-- its counts of leased tokens (e, r) from the members of held and runs
-- (scripts.go), rather than wipe the completions a window still counts.
local function init(st)
  if st[3] then return tonumber(st[3]), false end
  local seq, e, r = 0, 0, 0
  for k = 1, 4 do
    if k ~= 3 and redis.call('ZCARD', KEYS[k]) > (k == 4 and 0 or 1) then
      for _, m in ipairs(redis.call('ZRANGE', KEYS[k], 0, -1)) do
        local v = tonumber(string.match(m, '^%d+'))
        if v and v > seq then seq = v end
        if k == 2 then
          local lr = tonumber(string.match(m, '^%d+:(%d+)$'))
          if lr then e = e + lr - 1 end
        elseif k == 4 then
          r = r + (tonumber(string.match(m, ':(%d+)$')) or 0)
        end
      end
    end
  end
  if seq == 0 then
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[4])
    redis.call('ZADD', KEYS[1], '-inf', '_')
    redis.call('ZADD', KEYS[2], '+inf', '_')
    st[5], st[6], st[10], st[11] = false, false, false, false
    return 0, true
  end
  local z = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if z[2] and tonumber(z[2]) then st[2], st[4] = z[2], z[2] end
  z = redis.call('ZREVRANGE', KEYS[4], 0, 0, 'WITHSCORES')
  if z[2] and (not st[4] or tonumber(z[2]) > tonumber(st[4])) then st[4] = z[2] end
  z = redis.call('ZREVRANGEBYSCORE', KEYS[2], '(+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if z[2] then st[7] = z[2] end
  st[5] = false
  if redis.call('ZSCORE', KEYS[1], SENTINEL) then st[6] = '1' else st[6] = false end
  st[10], st[11] = e, r
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
  for i = 1, 4 do redis.call('PEXPIREAT', KEYS[i], x) end
  redis.call('HSET', KEYS[3], 'x', x)
end

-- zadd adds the score-member pairs of a to the ZSET key, in calls of at
-- most 1,000 pairs (Lua's unpack has a limit).
local function zadd(key, a)
  for i = 1, #a, 2000 do
    redis.call('ZADD', key, unpack(a, i, math.min(i + 1999, #a)))
  end
end

-- addRuns adds the score-member pairs a to runs (KEYS[4]), which gets the
-- keys' common expiry x (ms, the state's field x, if set) when it is new:
-- a schedule whose expiry does not move again must not leave it behind.
local function addRuns(x, a)
  local new = redis.call('EXISTS', KEYS[4]) == 0
  zadd(KEYS[4], a)
  x = tonumber(x)
  if new and x and x > 0 then redis.call('PEXPIREAT', KEYS[4], x) end
end
