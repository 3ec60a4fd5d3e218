-- tail.lua: sets tail, the latest live departure (scripts.go), when the
-- latest departure given (l0) is later than now: the latest score in
-- done that is later than now, or the latest lease deadline in held less
-- the hold timeout, whichever is later. If none is later than now (every
-- reservation that was withdrawn), the spacing counts from now. An end
-- that removes tokens makes the batch look again (tailKnown), so the
-- admissions after a withdrawal in a batch are scheduled without it; the
-- batch's own admissions (last) are not in Redis yet, and never withdrawn
-- in their own batch. Included by admit.lua and lease.lua, with
-- batch.lua's locals.
      tail, tailKnown = nil, true
      local z = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
      local c = tonumber(z[2])
      if c and c > now then tail = c end
      if held > 0 then
        z = redis.call('ZREVRANGEBYSCORE', KEYS[2], '(+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
        c = tonumber(z[2])
        if c and c - ht > now and (not tail or c - ht > tail) then tail = c - ht end
      end
      if not tail and sp > 0 then tail = now end
