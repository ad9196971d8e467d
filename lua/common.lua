-- Shared by every rl script: arguments, integer helpers, state codec and the
-- multi-limit rules of core/algorithms/decide.h. Each script is this file, then one
-- lua/algorithms/<name>.lua, then one lua/operations/<op>.lua (see
-- docs/key-schema.md for the arguments and the stored value).
--
-- keys[1]  the key's state (key schema v1; v2 for sliding_log's list; v3
--          for gcra and fixed_window)
-- argv[1]  now in microseconds, or '' to read Redis TIME
-- argv[2]  cost
-- argv[3]  the limits, space-separated: the smallest TTL in ms ('0' with
--          TIME; large under the manual clock, whose time does not move
--          with Redis's), then 6 values per limit: limit, window_us, burst,
--          limit_reduced, window_reduced, granularity_us
-- The short form, argv = { limits } alone, stands for { '', '1', limits }:
-- the usual call (Redis TIME, cost 1) carries one argument, not three (each
-- argument costs Redis a Lua string and a table slot per call;
-- core/redis/script_call.cpp sends it).
-- As a script (EVALSHA) these are KEYS and ARGV; as a Redis Function
-- (lua/library.lua) the function's own arguments.
--
-- Numbers are Lua doubles: every value stays below 2^53 and is formatted
-- with '%d' (tostring would print 1.7e+15). A scaled value that can exceed
-- 2^53 (gcra's tolerance, a token bucket's level: up to burst * window_reduced,
-- 2^85) is kept as a pair of whole and part, and products go through muldiv.

-- Library functions as locals: a global lookup per use is measurable here.
local tonumber, floor, format = tonumber, math.floor, string.format
local find, sub, concat, call = string.find, string.sub, table.concat, redis.call
local pack = struct.pack

-- The reply: {allowed, limit, remaining, retry_after_us, reset_after_us,
-- limit_index [, next_retry_after_us [, suppression factor]]} as one string
-- of these integers, each 8 bytes little-endian (struct '<i8'): Redis turns
-- a table into an array reply at about twice the cost (a lookup of 6 type
-- fields, a deferred length, a value per element). A decision of one limit
-- leaves out its limit and index (the caller's only limit, 0): {allowed,
-- remaining, retry_after_us, reset_after_us, next_retry_after_us}, R5.
local R5, R6, R7, R8 = '<i8i8i8i8i8', '<i8i8i8i8i8i8', '<i8i8i8i8i8i8i8', '<i8i8i8i8i8i8i8i8'
local REPLY = { [6] = R6, [7] = R7, [8] = R8 }
local function reply(t) return pack(REPLY[#t], unpack(t)) end

local function idiv(a, b) -- floor(a / b) for a >= 0, b > 0, exact
  local q = floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function ceil_div(a, b)
  return idiv(a + b - 1, b)
end

local TWO53 = 9007199254740992

-- floor(a * b / c) and a * b % c, exact for integers 0 <= a < 2^53 and
-- 0 < b, c with b + c <= 2^52 whose quotient stays below 2^53 (the
-- algorithms' products reach 2^93; core/ computes them in __int128).
local function muldiv(a, b, c)
  local p = a * b
  if p < TWO53 then -- exact: the common case, idiv inline
    local q = floor(p / c) -- never too small; one too large when p / c rounds up
    local rest = p - q * c
    if rest < 0 then
      q = q - 1
      rest = p - q * c
    end
    return q, rest
  end
  -- Long division, a's digits in base `radix` (a power of two, 64 unless
  -- b + c is large) first to last: each step keeps (digits so far) * b =
  -- q * c + rest, with rest * radix + digit * b < (c + b) * radix <= 2^53.
  local radix = 64
  while (b + c) * radix > TWO53 do radix = radix / 2 end
  local digits, n = {}, 0
  while a > 0 do
    local high = floor(a / radix) -- exact: a power of two
    n = n + 1
    digits[n] = a - high * radix
    a = high
  end
  local q, rest = 0, 0
  for i = n, 1, -1 do
    local t = rest * radix + digits[i] * b
    local d = idiv(t, c)
    q, rest = q * radix + d, t - d * c
  end
  return q, rest
end

-- Pairs (whole, part) stand for whole * base + part, 0 <= part < base.
local function pair_add(base, w1, p1, w2, p2)
  local w, p = w1 + w2, p1 + p2
  if p >= base then return w + 1, p - base end
  return w, p
end

local function pair_sub(base, w1, p1, w2, p2) -- for (w1, p1) >= (w2, p2)
  local w, p = w1 - w2, p1 - p2
  if p < 0 then return w - 1, p + base end
  return w, p
end

local function pair_le(w1, p1, w2, p2)
  return w1 < w2 or (w1 == w2 and p1 <= p2)
end

local function max(a, b)
  if a > b then return a end
  return b
end

local function min(a, b)
  if a < b then return a end
  return b
end

local function int(x)
  return format('%d', x)
end

-- Units leases' slices hold out of a gcra or token_bucket key
-- (core/algorithms/lease_hold.h): { leased_at, period, gen, held_new,
-- held_old }, nil on a key never leased. Holds expire by generations of
-- `period` us: held_new's slices were granted in generation gen, held_old's
-- in gen - 1. The algorithms compute the floor they put under the bucket
-- in their own scaled pairs (hold_terms gives its two terms).
local function hold_terms(h)
  return h.held_new + h.held_old, (h.gen + 1) * h.period, h.held_new, (h.gen + 2) * h.period
end

local function hold_live(h, now)
  if h.period <= 0 then return false end
  return (h.held_new > 0 and now < (h.gen + 2) * h.period) or
      (h.held_old > 0 and now < (h.gen + 1) * h.period)
end

local function hold_accepts(h, now, hold_us)
  if not hold_us or hold_us <= 0 then return false end
  return not h or not hold_live(h, now) or hold_us <= h.period
end

-- After a grant's units were taken from the bucket: its hold (the table,
-- made when there was none).
local function hold_add(h, now, units, hold_us)
  if not h or not hold_live(h, now) then
    return { leased_at = now, period = hold_us, gen = idiv(now, hold_us), held_new = units, held_old = 0 }
  end
  local g = idiv(now, h.period)
  if g > h.gen then h.held_old, h.held_new, h.gen = h.held_new, 0, g end
  h.held_new = h.held_new + units
  return h
end

-- A release of the slice of `slice` units granted at `granted_at`: true,
-- with its hold taken off, when the state still holds it.
local function hold_release(h, now, granted_at, slice)
  if h.period <= 0 or granted_at < h.leased_at or slice <= 0 then return false end
  local g = idiv(granted_at, h.period)
  if g == h.gen and h.held_new > 0 and now < (h.gen + 2) * h.period then
    h.held_new = h.held_new - min(slice, h.held_new)
    return true
  end
  if g == h.gen - 1 and h.held_old > 0 and now < (h.gen + 1) * h.period then
    h.held_old = h.held_old - min(slice, h.held_old)
    return true
  end
  return false
end

-- The largest f(units, expiry) over the holds' generations that hold units
-- (0 when none): when a floor comes down to a level, when it is gone.
local function hold_most(h, f)
  local u1, e1, u2, e2 = hold_terms(h)
  local out = 0
  if u1 > 0 then out = max(out, f(u1, e1)) end
  if u2 > 0 then out = max(out, f(u2, e2)) end
  return out
end

-- After a write: holds no slice can use whose floor is gone (idle: the
-- algorithm's hold_idle) leave an ordinary state.
local function hold_settle(s, r, now, idle)
  local h = s.hold
  if h and not hold_live(h, now) and idle(h, r) <= now then s.hold = nil end
end

-- refund and a lease's return on the buckets (gcra.lua, token_bucket.lua;
-- core/algorithms/*.cpp), over the algorithm's own arithmetic in `b`:
-- b.level(s, r, now) is the bucket as it stands (a pair, under the holds'
-- floor), b.put(s, r, now, whole, part, units) writes it with `units` back,
-- b.hold_idle(h, r) when the holds take nothing. A return (granted_at
-- given) measures before it takes its slice's hold off, so the units go back
-- to the bucket as the floor left it; a state that no longer holds the
-- slice is kept as it is (false).
local function bucket_give_back(b, s, r, now, units, granted_at, slice)
  local whole, part = b.level(s, r, now)
  if granted_at and (not s.hold or not hold_release(s.hold, now, granted_at, slice)) then
    return false
  end
  b.put(s, r, now, whole, part, units)
  hold_settle(s, r, now, b.hold_idle)
  return true
end

-- A lease's mark after a state's integers (one limit): the store time of
-- its first lease (fixed_window, sliding_window), or the holds' five
-- integers (gcra, token_bucket: algo.holds).
local function read_lease(algo, s, nums, at)
  if nums[at] == nil then return end
  if algo.holds then
    s.hold = { leased_at = nums[at], period = nums[at + 1], gen = nums[at + 2],
      held_new = nums[at + 3], held_old = nums[at + 4] }
  else
    s.leased_at = nums[at]
  end
end

local function write_lease(algo, s, out)
  local h = s.hold
  if h then
    out[#out + 1] = int(h.leased_at)
    out[#out + 1] = int(h.period)
    out[#out + 1] = int(h.gen)
    out[#out + 1] = int(h.held_new)
    out[#out + 1] = int(h.held_old)
  elseif s.leased_at then
    out[#out + 1] = int(s.leased_at)
  end
end

-- The expiry of a key whose state equals an empty one from `idle` (us) on,
-- as SET's option and value. Under Redis's clock (min_ttl 0) an absolute
-- instant rounded up to the millisecond: never before the state is spent,
-- at most 1 ms after (a TTL would count from Redis's millisecond, which lags
-- TIME by up to 1 ms, and so could end before the state is spent). Under the
-- manual clock, whose time is not Redis's, a TTL of at least min_ttl.
local function expiry(idle, now, min_ttl)
  if min_ttl == 0 then return 'PXAT', int(ceil_div(idle, 1000)) end
  return 'PX', int(max(ceil_div(idle - now, 1000), min_ttl))
end

local function now_us(at)
  if at ~= '' then return tonumber(at) end
  local t = call('TIME')
  return t[1] * 1000000 + t[2] -- Lua's own coercion: no call of tonumber
end

-- The cost argument: almost always '1', which a comparison of interned
-- strings finds without parsing.
local function cost_of(text)
  if text == '1' then return 1 end
  return tonumber(text)
end

-- Space-separated integers (the limits argument, a stored value).
local function numbers_of(raw)
  -- Split on single spaces with find: a third of the cost of gmatch.
  local nums, from = {}, 1
  while true do
    local space = find(raw, ' ', from, true)
    nums[#nums + 1] = tonumber(sub(raw, from, space and space - 1))
    if not space then break end
    from = space + 1
  end
  return nums
end

-- Parsed limits by their argument. A script starts empty each call; a
-- Function library keeps it, so a policy is parsed once per server.
local parsed_limits, parsed_count = {}, 0

local function limits_of(text)
  local rates = parsed_limits[text]
  if rates then return rates end
  local nums = numbers_of(text)
  rates = { min_ttl = nums[1] }
  for i = 1, (#nums - 1) / 6 do
    local at = 1 + (i - 1) * 6
    rates[i] = {
      limit = nums[at + 1],
      window = nums[at + 2],
      burst = nums[at + 3],
      lr = nums[at + 4],
      wr = nums[at + 5],
      g = nums[at + 6],
    }
  end
  if parsed_count >= 1024 then -- bounded: policies are few, but keys of rates may not be
    parsed_limits, parsed_count = {}, 0
  end
  parsed_limits[text], parsed_count = rates, parsed_count + 1
  return rates
end

-- The stored value: the integers of every limit's state.
local function load(key, algo, rates)
  local raw = call('GET', key)
  local nums = raw and numbers_of(raw) or {}
  local states, pos = {}, 1
  for i, r in ipairs(rates) do
    if nums[pos] == nil then
      states[i] = algo.empty()
    else
      states[i], pos = algo.decode(nums, pos, r)
    end
  end
  if rates[2] == nil then read_lease(algo, states[1], nums, pos) end -- see save
  return states
end

-- Writes the states with a TTL that ends when they equal an empty state,
-- or deletes the key when they already do.
local function save(key, algo, states, rates, now)
  local idle, out = 0, {}
  for i, r in ipairs(rates) do
    idle = max(idle, algo.idle_at(states[i], r))
    algo.encode(states[i], out, r, rates[2] == nil)
  end
  -- A lease's mark (one limit): after the state (read_lease).
  if rates[2] == nil then write_lease(algo, states[1], out) end
  if idle <= now then
    call('DEL', key)
    return
  end
  call('SET', key, concat(out, ' '), expiry(idle, now, rates.min_ttl))
end

local function verdict(r)
  return { allowed = false, limit = r.limit, remaining = 0, retry = 0, reset = 0 }
end

-- remaining: the smallest (its limit and 0-based index go with it, the
-- first on a tie); retry and reset: the largest, with retry -1 (never)
-- dominating. A table of the reply's integers (reply() packs it).
local function combine(vs)
  local out, index = vs[1], 0
  for i = 2, #vs do
    local v = vs[i]
    out.allowed = out.allowed and v.allowed
    if v.remaining < out.remaining then
      out.remaining = v.remaining
      out.limit = v.limit
      index = i - 1
    end
    if out.retry >= 0 then
      if v.retry < 0 then out.retry = -1 else out.retry = max(out.retry, v.retry) end
    end
    out.reset = max(out.reset, v.reset)
  end
  return { out.allowed and 1 or 0, out.limit, out.remaining, out.retry, out.reset, index }
end

-- An algorithm with `run` (suppressed: every call records, and a draw
-- decides) does each operation itself over load/save. Otherwise it keeps
-- its states in one string (decode/encode, with load/save above) unless it
-- has `open`: then it reads and writes the key
-- itself (`open`, `record`, `give_back`, `forget`; sliding_log's list).
local function open(key, algo, rates)
  if not algo.open then return load(key, algo, rates) end
  local log, states = algo.open(key), {}
  for i = 1, #rates do states[i] = log end
  return states
end

-- refund and reset change every limit, then report the state afterwards.
local function change(keys, argv, algo, op)
  local key, now, cost, rates = keys[1], now_us(argv[1]), cost_of(argv[2]), limits_of(argv[3])
  local states = open(key, algo, rates)
  if algo.open then
    if op == 'refund' then algo.give_back(states[1], rates, now, cost) else algo.forget(states[1]) end
  else
    for i, r in ipairs(rates) do
      if op == 'refund' then
        algo.refund(states[i], r, now, cost)
      else
        states[i] = algo.empty()
      end
    end
    save(key, algo, states, rates, now)
  end
  local vs = {}
  for i, r in ipairs(rates) do vs[i] = algo.decide(states[i], r, now, 0) end
  return reply(combine(vs))
end

-- After an admitted acquire of `cost`: how long until another of the same
-- cost would be admitted (0 while remaining covers it; -1 never). The
-- reply's 7th element, for the denied-key cache (core/deny_cache/): a key
-- that just took its last unit is known to be denied until then.
local function next_retry(algo, s, r, now, cost, remaining)
  if remaining >= cost then return 0 end
  local again = algo.decide(s, r, now, cost)
  if again.allowed then return 0 end
  return again.retry
end

-- One limit, the usual case: the steps of decide below without its lists
-- (a table costs as much as the arithmetic of a decision).
local function decide_one(key, algo, rates, now, cost, record)
  local r, s = rates[1], nil
  if algo.open then
    s = algo.open(key)
  else
    local raw = call('GET', key)
    if raw then
      local nums, after = numbers_of(raw), nil
      s, after = algo.decode(nums, 1, r)
      read_lease(algo, s, nums, after) -- a lease's mark (save)
    else
      s = algo.empty()
    end
  end
  local v = algo.decide(s, r, now, cost)
  if not v.allowed then
    local unchanged = algo.decide(s, r, now, 0)
    return pack(R5, 0, unchanged.remaining, v.retry, unchanged.reset, 0)
  end
  if not record then return pack(R5, 1, v.remaining, v.retry, v.reset, 0) end
  if algo.open then
    algo.record(s, rates, now, cost)
  else
    algo.consume(s, r, now, cost)
    save(key, algo, { s }, rates, now)
  end
  return pack(R5, 1, v.remaining, v.retry, v.reset, next_retry(algo, s, r, now, cost, v.remaining))
end

-- acquire and peek with several limits: all must admit; only acquire records.
local function decide_many(key, algo, rates, now, cost, record)
  local states = open(key, algo, rates)
  local vs, all = {}, true
  for i, r in ipairs(rates) do
    vs[i] = algo.decide(states[i], r, now, cost)
    all = all and vs[i].allowed
  end
  if all then
    if record and algo.open then
      algo.record(states[1], rates, now, cost)
    elseif record then
      for i, r in ipairs(rates) do algo.consume(states[i], r, now, cost) end
      save(key, algo, states, rates, now)
    end
    return reply(combine(vs))
  end
  -- Denied: nothing is consumed, so remaining and reset describe the
  -- unchanged state; retry still waits for every limit.
  local unchanged = {}
  for i, r in ipairs(rates) do
    unchanged[i] = algo.decide(states[i], r, now, 0)
    unchanged[i].retry = vs[i].retry
  end
  local out = combine(unchanged)
  out[1] = 0
  return reply(out)
end

-- Redis's clock in microseconds. The same second is the same interned
-- string: its microseconds are known without parsing it again.
local time_seconds, time_base = nil, 0 -- TIME's last seconds, in us
local function redis_now()
  local t = call('TIME')
  local seconds = t[1]
  if seconds ~= time_seconds then time_seconds, time_base = seconds, seconds * 1000000 end
  return time_base + t[2] -- Lua's own coercion: no call of tonumber
end

-- lease_call for a log (algo.ahead: sliding_log): the grant records its
-- units at the lease's end and its tag is that record's instant; a return
-- takes the units off that record (core/algorithms/sliding_log.cpp).
local function lease_ahead(key, algo, op, now, nums, rates)
  local r, log = rates[1], algo.open(key)
  if op == 'lease' then
    local cost, hold_us = nums[1], nums[2]
    if not cost or not hold_us or #nums > 2 then error('rl: lease takes "<units> <hold_us>"', 0) end
    local v = algo.decide(log, r, now, cost)
    if not v.allowed or hold_us <= 0 then
      local unchanged = algo.decide(log, r, now, 0)
      return pack(R5, 0, unchanged.remaining, v.allowed and 0 or v.retry, unchanged.reset, 0)
    end
    local at = algo.record_lease(log, rates, now, cost, hold_us)
    return pack(R5, 1, v.remaining, v.retry, at + r.window - now, at)
  end
  local units, tag = nums[1], nums[2]
  if not units or not tag or #nums > 3 then error('rl: release takes "<units> <granted_at> <slice>"', 0) end
  local taken = algo.release(log, rates, now, units, tag)
  local v = algo.decide(log, r, now, 0)
  return pack(R5, 1, v.remaining, v.retry, v.reset, taken and 1 or 0)
end

-- A lease's grant (lease: cost_text '<units> <hold_us>'; acquire the units
-- and mark the state, or hold them (algo.holds); the reply's fifth integer
-- is the store's time, the grant's tag) and its return (release: cost_text
-- '<units> <granted_at> <slice>'; the state afterwards, the fifth integer 1
-- when it still held the slice), as core/algorithms/decide.h. One limit, of
-- an algorithm that leases (algo.leases); the windows take the older
-- '<units>' and '<units> <granted_at>' too.
local function lease_call(key, algo, op, now, cost_text, rates)
  local r = rates[1]
  if not algo.leases or rates[2] ~= nil then
    error('rl: ' .. op .. ' takes one limit of fixed_window, sliding_window, sliding_log, gcra or token_bucket', 0)
  end
  local nums = numbers_of(cost_text)
  if algo.ahead then return lease_ahead(key, algo, op, now, nums, rates) end
  local s = load(key, algo, rates)[1]
  if op == 'lease' then
    local cost, hold_us = nums[1], nums[2]
    if not cost or #nums > 2 or (algo.holds and not hold_us) then
      error('rl: lease takes "<units> <hold_us>"', 0)
    end
    local v = algo.decide(s, r, now, cost)
    if v.allowed and algo.holds and not hold_accepts(s.hold, now, hold_us) then
      -- Holds of another length still live: no slice (decide.h).
      local unchanged = algo.decide(s, r, now, 0)
      return pack(R5, 0, unchanged.remaining, 0, unchanged.reset, 0)
    end
    if not v.allowed then
      local unchanged = algo.decide(s, r, now, 0)
      return pack(R5, 0, unchanged.remaining, v.retry, unchanged.reset, 0)
    end
    algo.consume(s, r, now, cost)
    if algo.holds then
      s.hold = hold_add(s.hold, now, cost, hold_us)
    elseif not s.leased_at then
      s.leased_at = now
    end
    save(key, algo, { s }, rates, now)
    return pack(R5, 1, v.remaining, v.retry, v.reset, now)
  end
  local units, granted_at, slice = nums[1], nums[2], nums[3] or 0
  if not units or not granted_at or #nums > 3 or (algo.holds and not nums[3]) then
    error('rl: release takes "<units> <granted_at> <slice>"', 0)
  end
  local taken = algo.give_back(s, r, now, units, granted_at, slice)
  if taken then save(key, algo, { s }, rates, now) end
  local v = algo.decide(s, r, now, 0)
  return pack(R5, 1, v.remaining, v.retry, v.reset, taken and 1 or 0)
end

-- The function (key, now, cost_text, limits) -> reply of one operation of
-- one algorithm; now in microseconds, or nil to read Redis TIME. A Function
-- library makes each once, at its first use (lua/library.lua: its entry
-- points and its batch); a script makes its own on each call (operation
-- below).
local function decider(algo, op)
  if op == 'lease' or op == 'release' then
    return function(key, now, cost_text, limits)
      return lease_call(key, algo, op, now or redis_now(), cost_text, limits_of(limits))
    end
  end
  if algo.run then -- suppressed: every call records, and a draw decides
    return function(key, now, cost_text, limits)
      return algo.run({ key }, { now and int(now) or '', cost_text, limits }, op)
    end
  end
  if op == 'refund' or op == 'reset' then
    return function(key, now, cost_text, limits)
      return change({ key }, { now and int(now) or '', cost_text, limits }, algo, op)
    end
  end
  -- acquire and peek: this runs on every call, with redis_now, cost_of and
  -- limits_of's cache inline.
  local record = op == 'acquire'
  local one = record and algo.acquire_one
  return function(key, now, cost_text, limits)
    local cost = 1
    if cost_text ~= '1' then cost = tonumber(cost_text) end
    local rates = parsed_limits[limits] or limits_of(limits)
    if now == nil then
      local t = call('TIME')
      local seconds = t[1]
      if seconds ~= time_seconds then time_seconds, time_base = seconds, seconds * 1000000 end
      now = time_base + t[2]
    end
    if rates[2] ~= nil then return decide_many(key, algo, rates, now, cost, record) end
    if one then return one(key, rates[1], now, cost, rates.min_ttl, cost_text, rates) end
    return decide_one(key, algo, rates, now, cost, record)
  end
end

-- A call's arguments (above: the short form, or now, cost, limits) as
-- decide's. lua/library.lua's entry points read them the same way, inline.
local function operation(algo, op)
  local decide = decider(algo, op)
  return function(keys, argv)
    local now, cost_text, limits = argv[1], argv[2], argv[3]
    if cost_text == nil then return decide(keys[1], nil, '1', now) end -- the short form
    if now == '' then
      now = nil
    else
      now = tonumber(now) or error('rl: now is not a number: ' .. now, 0)
    end
    return decide(keys[1], now, cost_text, limits)
  end
end
