package redisstore

// The two operations of batchScript (scripts.go) that leases use (lease.go),
// inline like the others (scripts_ops.go), with the same locals.

// leaseLiveLua is how long, in µs, a process counts as a leaseholder after
// its latest lease request (leaseLive, lease.go); leaseLiveMsLua is the
// same in milliseconds, the expiry of the leaseholders' ZSET.
const (
	leaseLiveLua   = "2000000"
	leaseLiveMsLua = "2000"
)

// leaseLua is the operation "lease": want (at most) tokens for the
// leaseholder holder, held as one admission of g <= want tokens (members
// "s", "s.2" ... "s.g", lease deadline now + the hold timeout, like an
// Acquire's), where g is the number of tokens free NOW under every limit:
// N less the held tokens less the completions a window can still reach
// (those of reservations still ahead included, so a remote caller that
// waits keeps the token it is owed), and at most the smallest N divided
// by the leaseholders live in KEYS[4] (a ZSET, member = holder, score =
// its latest lease request; those older than leaseLiveLua are dropped),
// so that one process cannot take what the others need. Nothing is
// granted while a pause lasts, while a reservation of any process is
// ahead (a lease never overtakes a caller that waits: FIFO across
// processes), behind a blocked admission of the batch, or with a spacing
// or a concurrency cap (which leases do not keep). The first lease makes
// held a skiplist, as batchScript makes done one (scripts.go), by swapping
// its sentinel "_" for the long one: a lease adds and removes many
// members at once, which a listpack makes cost its length each. Its reply is {6, now,
// g, s} (s = 0 when g = 0), or {5, now, 0, 0} when stale.
const leaseLua = `
    local want, holder = tonumber(ARGV[i + 1]), ARGV[i + 2]
    i = i + 4
    if stale then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 5, now, 0, 0
    else
      local g = want
      redis.call('ZADD', KEYS[4], now, holder)
      redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - ` + leaseLiveLua + `)
      redis.call('PEXPIRE', KEYS[4], ` + leaseLiveMsLua + `)
      local hs, share = redis.call('ZCARD', KEYS[4]), MAX
      for j = lo, hi, 2 do share = math.min(share, math.floor(tonumber(ARGV[j]) / hs)) end
      g = math.min(g, math.max(share, 1))
      if blocked or sp > 0 or K > 0 or (p and p > now) then g = 0 end
      if g > 0 then
        if not tailKnown then
` + tailLua + `
        end
        local base = last or tail
        if last and tail and tail > last then base = tail end
        if base and base > now then g = 0 end
      end
      if g > 0 then
        for j = lo, hi, 2 do
          local w, used = tonumber(ARGV[j + 1]), np
          if mq + w > now then
            used = used + redis.call('ZCOUNT', KEYS[1], string.format('(%.17g', now - w), '+inf')
          end
          local free = tonumber(ARGV[j]) - held - used
          if free < g then g = math.max(free, 0) end
        end
      end
      if g > 0 then
        if redis.call('ZSCORE', KEYS[2], '_') then
          redis.call('ZADD', KEYS[2], '+inf', SENTINEL)
          redis.call('ZREM', KEYS[2], '_')
        end
        seq = seq + 1
        local score = now + ht
        if score > MAX then score = MAX end
        if not hmin or score < hmin then hmin = score end
        soon = nil
        if score > hq then hq = score end
        held = held + g
        local z = #hz
        hz[z + 1], hz[z + 2] = score, seq
        local pre = seq .. '.'
        for j = 2, g do hz[z + 2 * j - 1], hz[z + 2 * j] = score, pre .. j end
        if score > horizon then horizon = score end
        if not last or now > last then last = now end
        if not lmax or now > lmax then lmax = now end
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 6, now, g, seq
      else
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 6, now, 0, 0
      end
    end
`

// reportLua is the operation "lrep": the report of the tokens of lease id
// (granted at d, so held until d + the hold timeout) that this process
// used or gives back, in pl: runs "j,n,u,x" of its tokens j ... j+n-1
// (token 1 is the member "id", token j "id.j"): u = -1 gives them back
// unused (removed, as if never granted: "cancel"); otherwise they were
// used by d + u on Redis's clock (the process's stamp, never earlier than
// the truth: lease.go) and complete then, clamped to now, with x more
// completions at that instant (a debt: Token.ReleaseN beyond 1, at most
// the largest N). A run is only touched if its first token is still held
// under that lease (its score is d + the hold timeout) and its deadline is
// ahead: one past its deadline completes at the deadline (expireLua), and
// one gone (a lost held: scripts.go) is never recorded twice. The tokens
// of one lease leave held together (their deadline, a lost key) or one by
// one through these reports, each once, so the first token of a run
// answers for the run; ZREM counts what it removed, and held with it. k is
// the number of tokens it ended (a local of the caller's, 0 before).
const reportLua = `
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
`
