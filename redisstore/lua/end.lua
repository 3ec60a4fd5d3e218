-- end.lua: the end of an admission, an operation of batch.lua and
-- endonly.lua (included there, with their locals: how, id, n, d): it ends
-- the hold or the reservation of admission id of n tokens, departed (or
-- to depart) at d, held with the timeout ht. A token is only touched if
-- its score is still the one that admission gave it (deadline d + ht, or
-- d): ids restart when an idle schedule expires, and a Token released
-- long after its deadline must not end a later admission that got the
-- same id. how says what to do:
--
--   "release"  the work is done: each token still held completes at
--              Redis's now (not before its departure, not after its
--              deadline) and moves from held to done;
--   "cancel"   a held token given back unused: each token still held and
--              within its lease is removed, as if never admitted;
--   "withdraw" a caller that gave up before its departure: its tokens are
--              removed wherever they are (held or done);
--   "use:<u>"  a release of work that used u tokens (Token.ReleaseN): the
--              first u still held complete as by "release", the others
--              are removed as by "cancel", and if u > n and a token was
--              still held, u-n more (at most the largest N of the limits,
--              which fills every window: more could not delay anyone
--              longer) are recorded as completions at the release,
--              members "<id>.d1"...: a debt (SPEC.md, "Cost known after
--              the call").
--
-- A token past its lease deadline is left to complete at the deadline
-- (except by "withdraw", which removes it wherever it is). Nothing else
-- changes: FIFO is derived from the reservations left (scripts.go), so a
-- withdrawn one holds nobody back. A release's completion (at most max(now,
-- l)) is no later than any of pend, so it goes to done at once, unless
-- done is gone (doneLost, set by endonly.lua: a lost done is made again,
-- with a pause that covers m, by the next batch.lua; m counts the
-- release). k is the number of tokens it released or removed.
    local due = d + ht
    if due > MAX then due = MAX end
    local k, used = 0, n
    if string.byte(how, 1) == 117 then
      used, how = tonumber(string.sub(how, 5)), 'release'
    end
    for j = 1, n do
      local m = id
      if j > 1 then m = id .. '.' .. j end
      local dl = tonumber(redis.call('ZSCORE', KEYS[2], m))
      if dl == due then
        if dl > now or how == 'withdraw' then
          redis.call('ZREM', KEYS[2], m)
          held, k = held - 1, k + 1
          if how == 'release' and j <= used then
            local c = now
            if c < d then c = d end
            if not doneLost then redis.call('ZADD', KEYS[1], c, m) end
            nd = nd + 1
            if c > mq then mq = c end
          end
        end
      elseif how == 'withdraw' then
        local c = tonumber(redis.call('ZSCORE', KEYS[1], m))
        if c == d or c == due then
          local x = redis.call('ZREM', KEYS[1], m)
          k, nd = k + x, nd - x
        end
      end
    end
    if k > 0 and used > n then
      local c, most = now, 0
      if c < d then c = d end
      for j = 6, 5 + 2 * tonumber(ARGV[5]), 2 do most = math.max(most, tonumber(ARGV[j])) end
      for j = 1, math.min(used - n, most) do
        if not doneLost then redis.call('ZADD', KEYS[1], c, id .. '.d' .. j) end
        nd = nd + 1
      end
      if c > mq then mq = c end
    end
    if k > 0 then hc = nil end
    if k > 0 and (how ~= 'release' or used < n) and l0 and l0 > now then tailKnown = false end
