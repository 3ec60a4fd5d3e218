package redisstore

// The operations of batchScript (scripts.go): pieces of its code, inline
// rather than Lua functions (a closure over the script's locals costs
// more than the work itself). They read and change the script's locals:
// the state read from the state hash (seq, p, mq, hq, and l0 with tail,
// tailKnown and lmax: see tailLua), last (the batch's latest departure), the
// counts of held and done tokens (held, nd), the arguments (sp, maxw, ht, and the limits at ARGV[lo..hi]), and
// what the batch builds (pend and np, its own completions, oldest first,
// not yet in done; dz and hz, the score-member pairs it adds to done and
// held at the end; hmin, the earliest deadline among hz; blocked;
// horizon, the latest time it recorded).

// expireLua completes every hold whose lease deadline has passed at its
// deadline: moved from held to done, with the scores Redis gave (no
// formatting).
const expireLua = `
  local od = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES')
  if #od > 0 then
    local a = {}
    for j = 1, #od, 2 do a[j], a[j + 1] = od[j + 1], od[j] end
    zadd(KEYS[1], a)
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
    held, nd = held - #od / 2, nd + #od / 2
    local c = tonumber(od[#od])
    if c > mq then mq = c end
  end
`

// admitLua is one admission: allow (Allow: only if it may go now), n
// tokens, hold (the hold timeout for held tokens, or -1), dl (the time
// left before the caller's deadline, or -1). It appends the four integers
// of its reply to out (at o). A caller with a deadline it cannot meet is
// not admitted (scripts.go): floorLua then says whether it is refused.
const admitLua = `
    local d = now
    if p and p > d then d = p end
    if not tailKnown then
` + tailLua + `
    end
    local base = last or tail
    if last and tail and tail > last then base = tail end
    if base and base + sp > d then d = base + sp end
    local bl = blocked
    if not bl and hold >= 0 and K > 0 then
` + holdsLua + `
      if hc >= K then
        bl = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
        if hmin and hmin < bl then bl = hmin end
      end
    end
    if not bl then
      for j = lo, hi, 2 do
        local free = tonumber(ARGV[j]) - held - n
        if free < 0 then
          bl = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
          if hmin and hmin < bl then bl = hmin end
          break
        end
        local w = tonumber(ARGV[j + 1])
        if free < nd + np and mq + w > d then
          local c
          if free < np then
            c = pend[np - free]
          else
            local z = redis.call('ZREVRANGE', KEYS[1], free - np, free - np, 'WITHSCORES')
            if z[1] and z[1] ~= SENTINEL and z[1] ~= '_' then c = tonumber(z[2]) end
          end
          if c and c + w > d then
            if held > 0 then
` + soonLua + `
              if c > soon then
                bl = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
                if hmin and hmin < bl then bl = hmin end
                break
              end
            end
            d = c + w
          end
        end
      end
    end
    if d > MAX then d = MAX end
    local late = false
    if dl >= 0 and not allow and (bl or d > now + dl) then
` + floorLua + `
      if now + dl <= b then
        late = true
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 4, b, b - now, 0
      elseif not bl then
        late = true
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 3, d, d - now, 0
      end
    end
    if late then
    elseif bl then
      if allow then
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 0, -1, 0, 0
      else
        blocked = bl
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 2, bl, bl - now, 0
      end
    elseif allow and d > now then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 0, d, d - now, 0
    else
      seq = seq + 1
      local a, score = dz, d
      if hold >= 0 then
        a, score = hz, d + hold
        if score > MAX then score = MAX end
        if not hmin or score < hmin then hmin = score end
        soon = nil
        if score > hq then hq = score end
        held = held + n
        if hc then hc = hc + 1 end
      else
        for j = 1, n do pend[np + j] = d end
        np = np + n
        if d > mq then mq = d end
      end
      local z = #a
      a[z + 1], a[z + 2] = score, seq
      for j = 2, n do a[z + 2 * j - 1], a[z + 2 * j] = score, seq .. '.' .. j end
      if score > horizon then horizon = score end
      last = d
      if not lmax or d > lmax then lmax = d end
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 1, d, d - now, seq
    end
`

// holdsLua sets hc, the number of holds open or reserved (admissions of
// Acquire in held: their first tokens, the members without a '.'), the
// batch's own included, when it is not known (an end of the batch makes
// it unknown). It reads every member of held: only with a concurrency
// cap, which keeps them few.
const holdsLua = `
      if not hc then
        hc = 0
        for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
          if m ~= '_' and m ~= SENTINEL and not string.find(m, '.', 1, true) then hc = hc + 1 end
        end
        for j = 2, #hz, 2 do
          if not string.find(hz[j], '.', 1, true) then hc = hc + 1 end
        end
      end
`

// soonLua sets soon, the earliest instant a token held now could complete:
// its departure, or now if that has come (the earliest lease deadline
// less the hold timeout, the batch's own holds included). A completion
// later than soon that would bind an admission is not final: a release
// before it would let the caller go earlier, so the caller is blocked (it
// asks again when a token is released, see Bucket) rather than reserve a
// time SPEC.md's formula may not give it.
const soonLua = `
              if not soon then
                soon = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2]) or MAX
                if hmin and hmin < soon then soon = hmin end
                soon = math.max(soon - ht, now)
              end
`

// tailLua sets tail, the latest live departure (scripts.go), when the
// latest departure given (l0) is later than now: the latest score in
// done that is later than now, or the latest lease deadline in held less
// the hold timeout, whichever is later. If none is later than now (every
// reservation that was withdrawn), the spacing counts from now. An end
// that removes tokens makes the batch look again (tailKnown), so the
// admissions after a withdrawal in a batch are scheduled without it;
// the batch's own admissions (last) are not in Redis yet, and never
// withdrawn in their own batch.
const tailLua = `
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
`

// floorLua computes b, the earliest instant an admission of n tokens
// could possibly go (SPEC.md, "Deadlines"): the pause, and each limit's
// window if every reservation ahead were withdrawn and every held token
// released now. So only completions at or before now count (those of
// the batch's pend first: they are the latest), and each held token as a
// completion at now. The spacing is left out: its base may be a
// withdrawn departure, and b must never be later than the truth.
const floorLua = `
      local b = now
      if p and p > b then b = p end
      local past = 0
      while past < np and pend[past + 1] <= now do past = past + 1 end
      for j = lo, hi, 2 do
        local free, w = tonumber(ARGV[j]) - held - n, tonumber(ARGV[j + 1])
        local c
        if free < 0 then
          c = now
        elseif free < past then
          c = pend[past - free]
        else
          local z = redis.call('ZREVRANGEBYSCORE', KEYS[1], now, '(-inf', 'WITHSCORES', 'LIMIT', free - past, 1)
          c = tonumber(z[2])
        end
        if c and c + w > b then b = c + w end
      end
      if b > MAX then b = MAX end
`

// endLua ends the hold or the reservation of admission id of n tokens,
// departed (or to depart) at d, held with the timeout ht. A token is only
// touched if its score is still the one that admission gave it (deadline
// d + ht, or d): ids restart when an idle schedule expires, and a Token
// released long after its deadline must not end a later admission that
// got the same id. how says what to do:
//
//	"release"  the work is done: each token still held completes at
//	           Redis's now (not before its departure, not after its
//	           deadline) and moves from held to done;
//	"cancel"   a held token given back unused: each token still held and
//	           within its lease is removed, as if never admitted;
//	"withdraw" a caller that gave up before its departure: its tokens
//	           are removed wherever they are (held or done);
//	"use:<u>"  a release of work that used u tokens (Token.ReleaseN):
//	           the first u still held complete as by "release", the
//	           others are removed as by "cancel", and if u > n and a
//	           token was still held, u-n more (at most the largest N of
//	           the limits, which fills every window: more could not
//	           delay anyone longer) are recorded as completions at the
//	           release, members "<id>.d1"...: a debt (SPEC.md, "Cost
//	           known after the call").
//
// A token past its lease deadline is left to complete at the deadline
// (except by "withdraw", which removes it wherever it is). Nothing else
// changes: FIFO is derived from the reservations left (scripts.go), so a
// withdrawn one holds nobody back. A release's completion (at most
// max(now, l)) is no later than any of pend, so it goes to done at once,
// unless done is gone (doneLost, set by endScript: a lost done is made
// again, with a pause that covers m, by the next batchScript; m counts
// the release). k is the number of tokens it released or removed.
const endLua = `
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
`
