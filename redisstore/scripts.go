package redisstore

import "github.com/redis/go-redis/v9"

// Times in the scripts are integers in microseconds on Redis's clock (TIME):
// about 1.8e15 today, well inside the 2^53 that a Lua number holds exactly.
// They are stored with string.format('%d'), which keeps every digit (plain
// tostring would round to 14 significant digits).

// admitScript runs one admission of SPEC.md's schedule atomically:
//
//	e = max(now, pauseUntil, last, max over limits of (e_(i-N) + W))
//
// KEYS[1] is the LIST of emission times, oldest first; KEYS[2] the
// pause-until time. ARGV[1] is "1" to record the admission only if the caller
// need not wait (Allow) and "0" to reserve e whatever it is (Wait); ARGV[2]
// is the largest window; then come -N (a list index) and W of each limit.
//
// Every redis.call inside a script costs about as much as a whole PING on
// the server, so the script makes as few as it can: TIME, GET, LINDEX for
// e_(i-1), LINDEX for each e_(i-N) (none when N = 1, or when e_(i-1) is
// already a window old) and RPUSH, with the trimming and the expiry below
// amortized over many admissions.
//
// The list keeps every emission that some window can still reach
// (e_j + maxW > now), not just the last N: a cancelled reservation can then
// be popped off the tail (releaseScript) without losing the emission that
// becomes e_(i-N). Stale emissions (e_j + maxW <= now) change nothing, so
// they are dropped lazily: whenever the list's length reaches a multiple of
// 8, up to 16 of them go from the head in one LRANGE and one LTRIM. The
// length moves by one per admission or release, so that happens at least
// every 8 admissions of a growing list, and drops more than those add: the
// list stays within a few entries of the live schedule, at two calls per 8
// admissions rather than two per admission.
//
// Cut Redis's time into slices as long as the largest window. The list
// expires where the third slice after the one holding its newest emission
// begins (PEXPIREAT on Redis's clock): more than two windows after that
// emission, when the state is empty again anyway, and at most three, so an
// idle key vanishes. That instant moves only when an emission enters a new
// slice, so the expiry is set once per slice instead of once per admission. A release only
// shortens the list, so it never needs a later expiry.
//
// It returns {admitted (1 or 0), e, e-now}: the delay rather than now, because
// it is 0 for most callers and go-redis decodes small integers without an
// allocation.
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local e = now
local p = redis.call('GET', KEYS[2])
if p then
  p = tonumber(p)
  if p > e then e = p end
end
local last = redis.call('LINDEX', KEYS[1], -1)
if last then
  last = tonumber(last)
  if last > e then e = last end
  for i = 3, #ARGV, 2 do
    local w = tonumber(ARGV[i + 1])
    -- e_(i-N) <= last, so e_(i-N) + W cannot bind when last + W <= e:
    -- the lookup is needed only while the newest emission is in a window.
    if last + w > e then
      local old = last
      if ARGV[i] ~= '-1' then old = redis.call('LINDEX', KEYS[1], ARGV[i]) end
      if old then
        old = tonumber(old) + w
        if old > e then e = old end
      end
    end
  end
end
if e > 9007199254740992 then e = 9007199254740992 end
if e > now and ARGV[1] == '1' then
  return {0, e, e - now}
end
local maxw = tonumber(ARGV[2])
local len = redis.call('RPUSH', KEYS[1], string.format('%d', e))
if len % 8 == 0 then
  local head = redis.call('LRANGE', KEYS[1], 0, 15)
  local dead = 0
  for i = 1, #head do
    if tonumber(head[i]) + maxw > now then break end
    dead = i
  end
  if dead > 0 then redis.call('LTRIM', KEYS[1], dead, -1) end
end
local b = math.floor(e / maxw)
if not last or math.floor(last / maxw) ~= b then
  redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.ceil((b + 3) * maxw / 1000)))
end
return {1, e, e - now}
`)

// releaseScript gives back the reservation ARGV[1] (its e, as admitScript
// returned it) if it is still the newest in KEYS[1]: the schedule is then as
// if it had never been made. Several reservations may share one e (a burst);
// popping any of them leaves the same list. It returns 1 if it gave the slot
// back, 0 if a later reservation was made meanwhile (the slot is kept).
var releaseScript = redis.NewScript(`
if redis.call('LINDEX', KEYS[1], -1) == ARGV[1] then
  redis.call('RPOP', KEYS[1])
  return 1
end
return 0
`)

// pauseScript holds admissions back until ARGV[1] microseconds from Redis's
// now, unless KEYS[1] already holds a later pause. The key expires when the
// pause ends. It returns 1 if it moved the pause, 0 otherwise.
var pauseScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local d = tonumber(ARGV[1])
local u = now + d
if u > 9007199254740992 then u = 9007199254740992 end
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) >= u then return 0 end
redis.call('SET', KEYS[1], string.format('%d', u), 'PX', math.ceil((u - now) / 1000))
return 1
`)
