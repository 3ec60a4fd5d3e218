-- report.lua: the operation "lrep" of batch.lua and endonly.lua (included
-- there, with their locals; ARGV: "lrep", id, d, pl): the report of the
-- tokens of lease id (granted at d, so held until d + the hold timeout)
-- that this process used or gives back, in pl: runs "j,n,u,x" of its
-- tokens j ... j+n-1 (token 1 is the member "id", token j "id.j"): u = -1
-- gives them back unused (removed, as if never granted: "cancel");
-- otherwise they were used by d + u on Redis's clock (the process's
-- stamp, never earlier than the truth: lease.go) and complete then,
-- clamped to now, with x more completions at that instant (a debt:
-- Token.ReleaseN beyond 1, at most the largest N). A run is only touched
-- if its first token is still held under that lease (its score is d + the
-- hold timeout) and its deadline is ahead: one past its deadline
-- completes at the deadline (batch.lua), and one gone (a lost held:
-- scripts.go) is never recorded twice. The tokens of one lease leave held
-- together (their deadline, a lost key) or one by one through these
-- reports, each once, so the first token of a run answers for the run;
-- ZREM counts what it removed, and held with it. k is the number of
-- tokens it ended (a local of the caller's, 0 before).
    local id, d, pl = ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
    i = i + 4
    local due = d + ht
    if due > MAX then due = MAX end
    local most = 0
    for j = 6, 5 + 2 * tonumber(ARGV[5]), 2 do most = math.max(most, tonumber(ARGV[j])) end
    for js, ns, us, xs in string.gmatch(pl, '(%d+),(%d+),(-?%d+),(%d+)') do
      local j0, n, u = tonumber(js), tonumber(ns), tonumber(us)
      local rm = {id}
      if j0 > 1 then rm[1] = id .. '.' .. j0 end
      local dl = tonumber(redis.call('ZSCORE', KEYS[2], rm[1]))
      if dl == due and dl > now then
        local pre = id .. '.'
        for j = 2, n do rm[j] = pre .. (j0 + j - 1) end
        local gone = 0
        for q = 1, n, 1000 do gone = gone + redis.call('ZREM', KEYS[2], unpack(rm, q, math.min(q + 999, n))) end
        held, k = held - gone, k + gone
        if u >= 0 then
          local c = d + u
          if c > now then c = now end
          local add = {}
          for j = 1, n do add[2 * j - 1], add[2 * j] = c, rm[j] end
          for y = 1, math.min(tonumber(xs), most) do add[2 * n + 2 * y - 1], add[2 * n + 2 * y] = c, rm[1] .. '.d' .. y end
          if not doneLost then
            for q = 1, #add, 2000 do redis.call('ZADD', KEYS[1], unpack(add, q, math.min(q + 1999, #add))) end
          end
          nd = nd + #add / 2
          if c > mq then mq = c end
        end
      end
    end
    if k > 0 then hc = nil end
    if k > 0 and l0 and l0 > now then tailKnown = false end
