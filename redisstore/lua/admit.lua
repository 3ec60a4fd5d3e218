-- admit.lua: one admission of batch.lua (included there, in its loop, with
-- its locals): allow (Allow: only if it may go now), n tokens, hold (the
-- hold timeout for held tokens, or -1), dl (the time left before the
-- caller's deadline, or -1). It appends the four integers of its reply to
-- out (at o). A caller with a deadline it cannot meet is not admitted
-- (batch.lua); the floor below then says whether it is refused. A probe
-- (mode '2', a lease pool's waiter with a deadline: lease_probe.go) is
-- only that check: it is refused or late as an admission would be, and
-- otherwise told {0, d, d - now, 0}; it never reserves, nor blocks the
-- admissions after it. The
-- completions are done's and, once a lease has reported its use, runs'
-- (runs.lua: kth; rw is the tokens in runs).
    local d = now
    if p and p > d then d = p end
    if not tailKnown then
--#include tail.lua
    end
    local base = last or tail
    if last and tail and tail > last then base = tail end
    if base and base + sp > d then d = base + sp end
    local bl = blocked
    if not bl and hold >= 0 and K > 0 then
      -- hc is the number of holds open or reserved (admissions of Acquire
      -- in held: their first tokens, the members without a '.'), the
      -- batch's own included, when it is not known (an end of the batch
      -- makes it unknown). It reads every member of held: only with a
      -- concurrency cap, which keeps them few.
      if not hc then
        hc = 0
        for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
          if m ~= '_' and m ~= SENTINEL and not string.find(m, '.', 1, true) then hc = hc + 1 end
        end
        for j = 2, #hz, 2 do
          if not string.find(hz[j], '.', 1, true) then hc = hc + 1 end
        end
      end
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
        if free < nd + rw + np and mq + w > d then
          local c
          if free < np then
            c = pend[np - free]
          elseif rw > 0 then
            c = kth(free - np, nil)
          else
            local z = redis.call('ZREVRANGE', KEYS[1], free - np, free - np, 'WITHSCORES')
            if z[1] and z[1] ~= SENTINEL and z[1] ~= '_' then c = tonumber(z[2]) end
          end
          if c and c + w > d then
            if held > 0 then
              -- soon is the earliest instant a token held now could
              -- complete: its departure, or now if that has come (the
              -- earliest lease deadline less the hold timeout, the
              -- batch's own holds included). A completion later than soon
              -- that would bind an admission is not final: a release
              -- before it would let the caller go earlier, so the caller
              -- is blocked (it asks again when a token is released, see
              -- Bucket) rather than reserve a time SPEC.md's formula may
              -- not give it.
              if not soon then
                soon = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2]) or MAX
                if hmin and hmin < soon then soon = hmin end
                soon = math.max(soon - ht, now)
              end
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
      -- b is the earliest instant an admission of n tokens could possibly
      -- go (SPEC.md, "Deadlines"): the pause, and each limit's window if
      -- every reservation ahead were withdrawn and every held token
      -- released now. So only completions at or before now count (those
      -- of the batch's pend first: they are the latest), and each held
      -- token as a completion at now. The spacing is left out: its base
      -- may be a withdrawn departure, and b must never be later than the
      -- truth.
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
        elseif rw > 0 then
          c = kth(free - past, now)
        else
          local z = redis.call('ZREVRANGEBYSCORE', KEYS[1], now, '(-inf', 'WITHSCORES', 'LIMIT', free - past, 1)
          c = tonumber(z[2])
        end
        if c and c + w > b then b = c + w end
      end
      if b > MAX then b = MAX end
      if now + dl <= b then
        late = true
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 4, b, b - now, 0
      elseif not bl then
        late = true
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 3, d, d - now, 0
      end
    end
    if late then
    elseif probe then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 0, d, d - now, 0
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
