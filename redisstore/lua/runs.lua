-- runs.lua: the completions of leased tokens, in runs (KEYS[4], a ZSET:
-- member "<id>:<j>:<w>", w tokens of lease id, from its token j, that
-- complete at the score; j = 0 for those its deadline completed), for
-- batch.lua's lookups (included there, after its locals: rw, the tokens
-- in runs; now; maxw). A window's count over done and runs together is
-- done's count plus the runs' weights, and the k-th latest completion is
-- found by a binary search over the runs a window can reach (read once
-- a batch, rs: their scores, latest first, and rc: the tokens in the runs
-- up to each), each step one count of done (ZCOUNT). A batch that adds a
-- run sets rs to nil, to be read again.
local rs, rc = nil, nil

-- runsRead reads the runs a window can still reach (later than now less
-- the largest window) into rs and rc, unless they are read.
local function runsRead()
  if rs then return end
  rs, rc = {}, {}
  if rw == 0 then return end
  local z = redis.call('ZREVRANGEBYSCORE', KEYS[4], '+inf', string.format('(%.17g', now - maxw), 'WITHSCORES')
  local acc = 0
  for j = 1, #z, 2 do
    acc = acc + tonumber(string.match(z[j], ':(%d+)$'))
    rs[#rs + 1], rc[#rc + 1] = tonumber(z[j + 1]), acc
  end
end

-- runsAfter is the number of tokens in runs that complete after x (x at
-- least now less the largest window).
local function runsAfter(x)
  runsRead()
  local n = 0
  for j = 1, #rs do
    if rs[j] <= x then break end
    n = rc[j]
  end
  return n
end

-- kth is the k-th latest completion (k = 0: the latest) of the tokens in
-- done no later than top (nil: any) and in runs, or nil if there are no
-- more than k; a completion a window before now or earlier may be missed
-- (it binds nobody). Let B(i) be done's tokens no earlier than rs[i]
-- plus rc[i]: it grows with i; at the first i with B(i) > k, the k-th
-- latest is done's at rank k - rc[i-1] among done's if that one is later
-- than rs[i], else rs[i] (so also when runs share a score); with no such
-- i, it is done's at rank k less every run's tokens.
local function kth(k, top)
  runsRead()
  local tops = '+inf'
  if top then tops = string.format('%.17g', top) end
  local a, b = 1, #rs + 1
  while a < b do
    local mid = math.floor((a + b) / 2)
    if redis.call('ZCOUNT', KEYS[1], string.format('%.17g', rs[mid]), tops) + rc[mid] > k then b = mid else a = mid + 1 end
  end
  local above = 0
  if a > 1 then above = rc[a - 1] end
  local z = redis.call('ZREVRANGEBYSCORE', KEYS[1], tops, '(-inf', 'WITHSCORES', 'LIMIT', k - above, 1)
  local c = tonumber(z[2])
  if a <= #rs and not (c and c > rs[a]) then c = rs[a] end
  return c
end
