-- batch.lua: a batch of operations on one schedule, run atomically in
-- their order (the local arrival order of one process's callers: group
-- commit): admissions of SPEC.md's schedule with held tokens, weights and
-- spacing (admit.lua), the ends of earlier admissions (end.lua: a
-- release, an unused cancel, a withdrawal), and a lease's operations
-- (lease.lua, report.lua). Each admission departs at
--
--   d = max(now, pause, l + S, max over limits of (c*_(i-N) + W))
--
-- where l is the latest live departure (scripts.go: withdrawn ones are
-- gone) and c* are the completions of the earlier tokens in time order,
-- those of the batch's earlier admissions included. A held token has no
-- completion yet: it counts as "later than any", so a caller that needs
-- it is blocked (its time cannot be known) until the token is released or
-- its lease deadline passes. In terms of counts: n tokens are free at t
-- when (held tokens) + (known completions c with c + W > t) <= N - n, so
-- t >= the (N - h - n + 1)-th latest known completion + W (h being the
-- number of held tokens), and the caller is blocked if N - h - n < 0.
-- Once one Wait or Acquire of the batch is blocked, the ones after it are
-- too (they are behind it in FIFO order); an Allow that cannot go blocks
-- nobody, and neither does a caller refused for its deadline.
--
-- A caller with a deadline (its context's, sent as the time left, on
-- Redis's clock from now: a little later than the true one, by the time
-- the request took to arrive) is never reserved past it: a caller that
-- cannot go by its deadline is as if it had never arrived (SPEC.md,
-- "Cancellation"), so it holds nobody back. If its deadline is no later
-- than the earliest instant it could possibly go (SPEC.md, "Deadlines":
-- the pause and the window if every reservation ahead were withdrawn and
-- every held token released now) it is refused; otherwise it is told
-- when it would go, and waits unreserved until its context ends or this
-- process frees a token.
--
-- KEYS: done, held, state, runs (and, for a lease's operations, lessees).
-- ARGV:
-- the number k of operations, the spacing S, the largest window (how long
-- a departure can matter), the hold timeout, the number of limits and N
-- and W of each, the configuration's version and when it was read
-- (config.go: an admission of a process whose configuration is older
-- than c, or was read more than CONF_BOUND before now, is answered {5,
-- now, 0, 0}, stale, and not made), the concurrency cap K (0: none;
-- SPEC.md, "Concurrency": an Acquire is blocked while K holds are open or
-- reserved, until one ends), the tier: "" (a Bucket), or the limits as
-- encodeLimits spells them (a Keyed limiter's key, tiers.go: the first
-- batch under a version records them as t; a batch under the same
-- version with other limits admits nothing and answers each admission
-- {7, t, 0, 0}, t a string); then the k operations, four arguments each:
-- an admission is "1" to record it only if the caller may go now (Allow)
-- or "0" to reserve d whatever it is ("2": a probe of the deadline only,
-- admit.lua), n, -1 or, for held tokens (Acquire), the hold timeout, and
-- -1 or the time left before the caller's deadline; the end of an admission is "release", "cancel",
-- "withdraw" or "use:<u>", its id, its n and its departure d (end.lua);
-- "lease" (lease.lua) and "lrep" (report.lua) are a lease's.
--
-- Expired holds complete at their deadline first (moved from held to
-- done; skipped when nothing is held). Completions a window old (c + maxW
-- <= now) are dropped lazily, whenever the id counter passes a multiple
-- of 16. A lookup (ZREVRANGE, the dearest call) is skipped when it cannot
-- bind: when there are no more than N - h - n completions (ZCARD counts
-- done's: keeping counters in the state hash instead measured no cheaper,
-- and made every release dearer; r counts runs'), or when the newest one
-- (at most m) is more than a window before d. Leased tokens are counted,
-- not listed: a lease is one member of held with its count (lease.lua),
-- its use one member of runs a run of tokens (report.lua, runs.lua), so
-- the held tokens are held's members less its sentinel plus e. Every completion a batch adds for a Wait
-- is at least every completion before it (d >= now, and a release
-- completes at now), so the batch keeps its own, oldest first, in pend,
-- looks there first, and adds them all with one ZADD at the end; the
-- state is written once, with one HSET of the fields that changed: l, s
-- and m when only admissions were made (the common case, without building
-- a table), or whichever changed (a fresh state is written, with its
-- expiry, even if nothing was admitted). Before its ZADD, the first batch
-- that finds more than SKIPLIST_AT completions in done swaps done's
-- sentinel (scripts.go): once in the schedule's life.
--
-- It returns four integers per operation: for an admission {1, d, d-now,
-- id} when admitted (the delay rather than now: usually 0, which go-redis
-- decodes without an allocation); {0, d, d-now, 0} when Allow would have
-- to wait (d = -1, delay 0 if blocked); {2, u, u-now, 0} when blocked by
-- held tokens, u being the earliest lease deadline; {3, d, d-now, 0} when
-- the caller would go at d, after its deadline (not reserved); {4, b,
-- b-now, 0} when it is refused, b being the earliest instant it could
-- possibly go. For an end {k, now, 0, 0}, k being the number of tokens it
-- released or removed; for a lease's operations, see their files.
--
-- The operations are included inline rather than called as Lua
-- functions (a closure over the script's locals costs more than the work
-- itself); they read and change these locals: the state read from the
-- state hash (seq, p, mq, hq, and l0 with tail, tailKnown and lmax: see
-- tail.lua), last (the batch's latest departure), the counts of held and
-- done tokens (held, nd), the arguments (sp, maxw, ht, and the limits at
-- ARGV[lo..hi]), and what the batch builds (pend and np, its own
-- completions, oldest first, not yet in done; dz and hz, the score-member
-- pairs it adds to done and held at the end; hmin, the earliest deadline
-- among hz; blocked; horizon, the latest time it recorded).

--#include schedule.lua
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local st = redis.call('HMGET', KEYS[3], 'p', 'l', 's', 'm', 'x', 'k', 'h', 'c', 't', 'e', 'r')
local seq, fresh = init(st)
local seq0 = seq
local p, l0, mq, hq = tonumber(st[1]), tonumber(st[2]), tonumber(st[4]) or -1, tonumber(st[7]) or -1
local p0, mq0, hq0, lmax = p, mq, hq, l0
local e, rw = tonumber(st[10]) or 0, tonumber(st[11]) or 0
local e0, rw0 = e, rw
local sp, maxw, ht = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local lo, hi = 6, 5 + 2 * tonumber(ARGV[5])
local cver, cread, cseen = tonumber(ARGV[hi + 1]), tonumber(ARGV[hi + 2]), tonumber(st[8]) or 0
local stale = now - cread > CONF_BOUND or cseen > cver
local tier = ARGV[hi + 4]
local mism = not stale and tier ~= '' and cver == cseen and st[9] and st[9] ~= tier
local pend, np, dz, hz, hmin = {}, 0, {}, {}, nil
local blocked, horizon = nil, -1
local MAX = 9007199254740992
local hn, nd = redis.call('ZCARD', KEYS[2]) - 1, redis.call('ZCARD', KEYS[1]) - 1
local held = hn + e
local doneLost, runsLost = false, rw > 0 and redis.call('EXISTS', KEYS[4]) == 0
-- A lost done, held or runs is made again (runs when a run comes), and
-- the schedule paused until every token it may have held has renewed
-- (scripts.go).
if hn < 0 or nd < 0 or runsLost then
  if hn < 0 then
    redis.call('ZADD', KEYS[2], '+inf', '_')
    held, e = 0, 0
    if hq + maxw > now and (not p or p < hq + maxw) then p = hq + maxw end
  end
  local pm = runsLost -- a lost done or runs: until m plus a window
  if nd < 0 then
    redis.call('ZADD', KEYS[1], '-inf', '_')
    nd, pm = 0, true
    if st[6] then redis.call('HDEL', KEYS[3], 'k') st[6] = false end
  end
  if runsLost then rw, runsLost = 0, false end
  if pm and mq + maxw > now and (not p or p < mq + maxw) then p = mq + maxw end
  if p and p > MAX then p = MAX end
  st[5] = false
  horizon = math.max(now, p or now)
end
--#include runs.lua
-- Every hold whose lease deadline has passed completes at its deadline:
-- moved from held to done, with the scores Redis gave (no formatting); a
-- lease's member, with the tokens it still holds, to runs (as the run
-- "<id>:0:<r>").
if held > 0 then
  local od = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES')
  if #od > 0 then
    local a, ra = {}, {}
    for j = 1, #od, 2 do
      local lid, lr = string.match(od[j], '^(%d+):(%d+)$')
      if lid then
        lr = tonumber(lr)
        ra[#ra + 1], ra[#ra + 2] = od[j + 1], lid .. ':0:' .. lr
        held, e, rw = held - lr, e - lr + 1, rw + lr
      else
        a[#a + 1], a[#a + 2] = od[j + 1], od[j]
        held, nd = held - 1, nd + 1
      end
    end
    if #a > 0 then zadd(KEYS[1], a) end
    if #ra > 0 then addRuns(st[5], ra) rs = nil end
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
    local c = tonumber(od[#od])
    if c > mq then mq = c end
  end
end
local tail, tailKnown, last, soon = l0, not (l0 and l0 > now), nil, nil
local out = {}
local K, hc = tonumber(ARGV[hi + 3]), nil
local i = hi + 5
for r = 1, tonumber(ARGV[1]) do
  local mode, o = ARGV[i], #out
  if mode == '0' or mode == '1' or mode == '2' then
    local allow, n, hold, dl = mode == '1', tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    local probe = mode == '2'
    i = i + 4
    if stale then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 5, now, 0, 0
    elseif mism then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 7, st[9], 0, 0
    else
--#include admit.lua
    end
  elseif mode == 'lease' then
--#include lease.lua
  elseif mode == 'lrep' then
    local k = 0
--#include report.lua
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = k, now, 0, 0
  else
    local how, id, n, d = mode, ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    i = i + 4
--#include end.lua
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = k, now, 0, 0
  end
end
if not st[6] and nd + np > SKIPLIST_AT then
  redis.call('ZADD', KEYS[1], '-inf', SENTINEL)
  redis.call('ZREM', KEYS[1], '_')
  redis.call('HSET', KEYS[3], 'k', 1)
end
if #dz > 0 then zadd(KEYS[1], dz) end
if #hz > 0 then zadd(KEYS[2], hz) end
if math.floor(seq / 16) ~= math.floor(seq0 / 16) then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '(-inf', now - maxw)
  if rw > 0 then
    local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - maxw)
    if #old > 0 then
      for _, m in ipairs(old) do rw = rw - tonumber(string.match(m, ':(%d+)$')) end
      redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - maxw)
    end
  end
end
if fresh or p ~= p0 or hq ~= hq0 or not lmax or e ~= e0 or rw ~= rw0 then
  local w = {}
  if lmax and (lmax ~= l0 or fresh) then w[#w + 1], w[#w + 2] = 'l', lmax end
  if p and (p ~= p0 or fresh) then w[#w + 1], w[#w + 2] = 'p', p end
  if seq ~= seq0 or fresh then w[#w + 1], w[#w + 2] = 's', seq end
  if mq ~= mq0 or fresh then w[#w + 1], w[#w + 2] = 'm', mq end
  if hq ~= hq0 or (fresh and hq >= 0) then w[#w + 1], w[#w + 2] = 'h', hq end
  if fresh and st[6] then w[#w + 1], w[#w + 2] = 'k', 1 end
  if e ~= e0 or (fresh and e > 0) then w[#w + 1], w[#w + 2] = 'e', e end
  if rw ~= rw0 or (fresh and rw > 0) then w[#w + 1], w[#w + 2] = 'r', rw end
  if #w > 0 then redis.call('HSET', KEYS[3], unpack(w)) end
elseif seq ~= seq0 or lmax ~= l0 or mq ~= mq0 then
  redis.call('HSET', KEYS[3], 'l', lmax, 's', seq, 'm', mq)
end
if stale or mism then
elseif cver > cseen and tier ~= '' then redis.call('HSET', KEYS[3], 'c', cver, 't', tier)
elseif cver > cseen then redis.call('HSET', KEYS[3], 'c', cver)
elseif tier ~= '' and not st[9] then redis.call('HSET', KEYS[3], 't', tier)
end
if fresh and horizon < 0 then horizon = now end
if horizon >= 0 then expireAt(st, horizon + maxw, maxw) end
return out
