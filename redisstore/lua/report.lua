-- report.lua: the operation "lrep" of batch.lua and endonly.lua (included
-- there, with their locals; ARGV: "lrep", id, d, pl): the report of the
-- tokens of lease id (granted at d, so held until d + the hold timeout)
-- that this process used or gives back, in pl: runs "j,n,u,x" of its
-- tokens j ... j+n-1: u = -1 gives them back unused (as if never
-- granted: "cancel"); otherwise they were used by d + u on Redis's clock
-- (the process's stamp, never earlier than the truth: lease.go) and
-- complete then, clamped to now, with x more completions at that instant
-- (a debt: Token.ReleaseN beyond 1, at most the largest N): one member
-- "<id>:<j>:<w>" of runs (runs.lua) of w = n + x tokens. The lease's
-- member of held ("id:r", lease.lua) counts down by the tokens reported,
-- and goes when none is left. A lease is only touched if its member is
-- still held with the lease's deadline (its score is d + the hold
-- timeout), and that deadline is ahead: one past it completes its
-- tokens at the deadline (batch.lua), and one gone (a lost held:
-- scripts.go) never has a token recorded twice. A process reports each
-- token once, so the count is all a lease needs to keep; a run of more
-- tokens than the lease holds counts what it holds. k is the number of
-- tokens it ended (a local of the caller's, 0 before).
    local id, d, pl = ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
    i = i + 4
    local due = d + ht
    if due > MAX then due = MAX end
    local lm, lr = nil, 0
    if due > now then
      for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], due, due)) do
        local lid, r = string.match(m, '^(%d+):(%d+)$')
        if lid == id then lm, lr = m, tonumber(r) break end
      end
    end
    if lm then
      local most = 0
      for j = 6, 5 + 2 * tonumber(ARGV[5]), 2 do most = math.max(most, tonumber(ARGV[j])) end
      local left, add = lr, {}
      for js, ns, us, xs in string.gmatch(pl, '(%d+),(%d+),(-?%d+),(%d+)') do
        local n, u = math.min(tonumber(ns), left), tonumber(us)
        if n > 0 then
          left, k = left - n, k + n
          if u >= 0 then
            local c, w = d + u, n + math.min(tonumber(xs), most)
            if c > now then c = now end
            add[#add + 1], add[#add + 2] = c, id .. ':' .. js .. ':' .. w
            rw = rw + w
            if c > mq then mq = c end
          end
        end
      end
      redis.call('ZREM', KEYS[2], lm)
      if left > 0 then redis.call('ZADD', KEYS[2], due, id .. ':' .. left) end
      held, e = held - lr + left, e - lr + math.max(left, 1)
      if #add > 0 and not runsLost then addRuns(st[5], add) end
      rs = nil
    end
    if k > 0 then hc = nil end
    if k > 0 and l0 and l0 > now then tailKnown = false end
