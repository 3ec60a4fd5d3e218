-- lease.lua: the operation "lease" of batch.lua (included there, with its
-- locals; the lease's ARGV: "lease", want, holder, 0): want (at most)
-- tokens for the leaseholder holder, held as one admission of g <= want
-- tokens, one member "s:g" of held (s its id, g the tokens it still
-- holds: report.lua counts them down; e, in the state, counts the tokens
-- of such members beyond one each), with the lease deadline now + the
-- hold timeout, like an Acquire's. g is the number of tokens free NOW
-- under every limit: N less the held tokens less the completions a window
-- can still reach (those of reservations still ahead included, so a
-- remote caller that waits keeps the token it is owed; the count is
-- skipped when there are fewer completions than that leaves), and at most
-- the smallest N divided by the leaseholders live in KEYS[5] (a ZSET,
-- member = holder, score = its latest lease request; those older than
-- LEASE_LIVE are dropped), so that one process cannot take what the
-- others need. Nothing is granted while a pause lasts, while a
-- reservation of any process is ahead (a lease never overtakes a caller
-- that waits: FIFO across processes), behind a blocked admission of the
-- batch, or with a spacing or a concurrency cap (which leases do not
-- keep). Its reply is {6, now, g, s} (s = 0 when g = 0), or {5, now, 0,
-- 0} when stale.
    local want, holder = tonumber(ARGV[i + 1]), ARGV[i + 2]
    i = i + 4
    if stale then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 5, now, 0, 0
    else
      local g = want
      redis.call('ZADD', KEYS[5], now, holder)
      redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - LEASE_LIVE)
      redis.call('PEXPIRE', KEYS[5], LEASE_LIVE_MS)
      local hs, share = redis.call('ZCARD', KEYS[5]), MAX
      for j = lo, hi, 2 do share = math.min(share, math.floor(tonumber(ARGV[j]) / hs)) end
      g = math.min(g, math.max(share, 1))
      if blocked or sp > 0 or K > 0 or (p and p > now) then g = 0 end
      if g > 0 then
        if not tailKnown then
--#include tail.lua
        end
        local base = last or tail
        if last and tail and tail > last then base = tail end
        if base and base > now then g = 0 end
      end
      if g > 0 then
        for j = lo, hi, 2 do
          local w, used = tonumber(ARGV[j + 1]), np
          if mq + w > now and tonumber(ARGV[j]) - held - np - nd - rw < g then
            used = used + redis.call('ZCOUNT', KEYS[1], string.format('(%.17g', now - w), '+inf') + runsAfter(now - w)
          end
          local free = tonumber(ARGV[j]) - held - used
          if free < g then g = math.max(free, 0) end
        end
      end
      if g > 0 then
        seq = seq + 1
        local score = now + ht
        if score > MAX then score = MAX end
        if not hmin or score < hmin then hmin = score end
        soon = nil
        if score > hq then hq = score end
        held, e = held + g, e + g - 1
        local z = #hz
        hz[z + 1], hz[z + 2] = score, seq .. ':' .. g
        if score > horizon then horizon = score end
        if not last or now > last then last = now end
        if not lmax or now > lmax then lmax = now end
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 6, now, g, seq
      else
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 6, now, 0, 0
      end
    end
