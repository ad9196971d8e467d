-- GCRA, as core/algorithms/gcra.cpp. State: tat (theoretical arrival time, rounded up
-- to the microsecond) and frac (how far the exact TAT lies before it, in
-- 1/limit_reduced us). Durations below are scaled to 1/limit_reduced us, so
-- one unit of cost is exactly window_reduced of them; as they reach 2^85,
-- each is a pair (us, part): us * limit_reduced + part.
local algo = { leases = true, holds = true } -- slices hold their units (common.lua lease_call)

-- How far the stored TAT lies ahead of now (0 when it is in the past).
local function raw_ahead(s, r, now)
  if s.tat <= now then return 0, 0 end
  if s.frac == 0 then return s.tat - now, 0 end
  return s.tat - now - 1, r.lr - s.frac
end

-- Stores a TAT `us, part` after now.
local function set_ahead(s, r, now, us, part)
  if part > 0 then
    s.tat, s.frac = now + us + 1, r.lr - part
  else
    s.tat, s.frac = now + us, 0
  end
end

-- The duration of `cost` units (cost <= burst, so below 2^52 us).
local function span_of(r, cost) return muldiv(cost, r.wr, r.lr) end

local function ceil_us(us, part)
  if part > 0 then return us + 1 end
  return us
end

-- The holds' floor under the TAT (core/algorithms/lease_hold.cpp): each
-- generation's units until it expires, then less by the refill since.
local function hold_term(r, now, units, expiry)
  if units <= 0 then return 0, 0 end
  local us, part = span_of(r, units)
  if now <= expiry then return us, part end
  if pair_le(us, part, now - expiry, 0) then return 0, 0 end
  return pair_sub(r.lr, us, part, now - expiry, 0)
end

local function hold_floor(h, r, now)
  local u1, e1, u2, e2 = hold_terms(h)
  local us, part = hold_term(r, now, u1, e1)
  local us2, part2 = hold_term(r, now, u2, e2)
  if pair_le(us2, part2, us, part) then return us, part end
  return us2, part2
end

-- The least wait from now after which the floor is at most `us, part`.
local function hold_wait(h, r, now, us, part)
  return hold_most(h, function(units, expiry)
    local hu, hp = span_of(r, units)
    if pair_le(hu, hp, us, part) then return 0 end
    return expiry - now + ceil_us(pair_sub(r.lr, hu, hp, us, part))
  end)
end

local function hold_idle(h, r)
  return hold_most(h, function(units, expiry) return expiry + ceil_us(span_of(r, units)) end)
end

-- How far the TAT lies ahead of now, no nearer than the holds' floor.
local function ahead_of(s, r, now)
  local us, part = raw_ahead(s, r, now)
  if s.hold then
    local fu, fp = hold_floor(s.hold, r, now)
    if not pair_le(fu, fp, us, part) then return fu, fp end
  end
  return us, part
end

local function settle(s, r, now) hold_settle(s, r, now, hold_idle) end

function algo.empty() return { tat = 0, frac = 0 } end
-- One limit alone stores 'tat' while frac is 0 (key schema v3).
function algo.decode(nums, pos) return { tat = nums[pos], frac = nums[pos + 1] or 0 }, pos + 2 end
function algo.encode(s, out, r, alone)
  out[#out + 1] = int(s.tat)
  if s.frac ~= 0 or not alone or s.hold then out[#out + 1] = int(s.frac) end
end
function algo.idle_at(s, r)
  if s.hold then return max(s.tat, hold_idle(s.hold, r)) end
  return s.tat
end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local lr = r.lr
  local us, part = ahead_of(s, r, now) -- the TAT once this decision is recorded
  local tol_us, tol_part = span_of(r, r.burst)
  if cost > r.burst then
    v.retry = -1
  else
    local next_us, next_part = pair_add(lr, us, part, span_of(r, cost))
    if pair_le(next_us, next_part, tol_us, tol_part) then
      v.allowed = true
      us, part = next_us, next_part
    elseif not s.hold then
      v.retry = ceil_us(pair_sub(lr, next_us, next_part, tol_us, tol_part))
    else
      -- The stored TAT comes nearer at the clock's rate, the holds' floor
      -- only once their generation expires: both must leave room.
      local room_us, room_part = pair_sub(lr, tol_us, tol_part, span_of(r, cost))
      local raw_us, raw_part = raw_ahead(s, r, now)
      local retry = 0
      if not pair_le(raw_us, raw_part, room_us, room_part) then
        retry = ceil_us(pair_sub(lr, raw_us, raw_part, room_us, room_part))
      end
      v.retry = max(retry, hold_wait(s.hold, r, now, room_us, room_part))
    end
  end
  -- remaining: floor((tolerance - after) / window_reduced)
  local left_us, left_part = pair_sub(lr, tol_us, tol_part, us, part)
  local units, rest = muldiv(left_us, lr, r.wr)
  v.remaining = units + idiv(rest + left_part, r.wr)
  v.reset = ceil_us(us, part)
  if s.hold then v.reset = max(v.reset, hold_wait(s.hold, r, now, 0, 0)) end
  return v
end

function algo.consume(s, r, now, cost)
  local us, part = ahead_of(s, r, now)
  set_ahead(s, r, now, pair_add(r.lr, us, part, span_of(r, cost)))
  settle(s, r, now)
end

-- Sets the TAT `units` nearer than `us, part`.
local function set_back(s, r, now, us, part, units)
  local back_us, back_part = span_of(r, min(max(units, 0), r.burst))
  if pair_le(us, part, back_us, back_part) then
    set_ahead(s, r, now, 0, 0)
  else
    set_ahead(s, r, now, pair_sub(r.lr, us, part, back_us, back_part))
  end
end

local bucket = { level = ahead_of, put = set_back, hold_idle = hold_idle }
function algo.refund(s, r, now, cost) bucket_give_back(bucket, s, r, now, cost) end
-- A lease's return (core/algorithms/gcra.cpp give_back).
function algo.give_back(s, r, now, units, granted_at, slice)
  return bucket_give_back(bucket, s, r, now, units, granted_at, slice)
end

-- acquire with one limit, the common case, in locals (common.lua decide_one
-- makes tables): the same decision, the same value.
function algo.acquire_one(key, r, now, cost, min_ttl, cost_text, rates)
  local lr, wr, burst = r.lr, r.wr, r.burst
  local raw = call('GET', key)
  local tat, frac = 0, 0
  if raw then
    tat = tonumber(raw) -- one limit: 'tat' alone while frac is 0
    if not tat then
      local space = find(raw, ' ', 1, true)
      tat, frac = tonumber(sub(raw, 1, space - 1)), tonumber(sub(raw, space + 1))
      -- More than 'tat frac': a leased state's holds follow (common.lua).
      if not frac then return decide_one(key, algo, rates, now, cost, true) end
    end
  end
  -- While the tolerance burst * wr stays below 2^51, every duration here
  -- (at most three of it) fits one number in 1/lr us, one unit of cost
  -- being wr of them: no pairs. A TAT further ahead (Redis's clock stepped
  -- back) takes the general path.
  local tol = r.gcra_tol
  if tol == nil then
    tol = false
    if burst * wr < TWO53 / 4 then tol = burst * wr end
    r.gcra_tol = tol
  end
  local ahead = 0 -- how far the exact TAT lies ahead of now, in 1/lr us
  if tat > now then ahead = (tat - now) * lr - frac end
  if tol and ahead <= tol then
    local span = cost * wr
    local next = ahead + span
    if cost > burst or next > tol then
      local retry = -1
      if cost <= burst then retry = ceil_div(next - tol, lr) end
      return pack(R5, 0, idiv(tol - ahead, wr), retry, ceil_div(ahead, lr), 0)
    end
    local remaining, reset = idiv(tol - next, wr), next
    if lr > 1 then reset = ceil_div(next, lr) end
    tat = now + reset
    local value = int(tat)
    if reset * lr > next then value = value .. ' ' .. int(reset * lr - next) end
    if min_ttl == 0 then
      local at = floor(tat / 1000) -- ceil_div(tat, 1000), inline: exact below 2^53
      if at * 1000 < tat then at = at + 1 end
      call('SET', key, value, 'PXAT', int(at))
    else
      call('SET', key, value, 'PX', int(max(ceil_div(reset, 1000), min_ttl)))
    end
    local again = 0 -- common.lua next_retry: when another call of this cost would pass
    if remaining < cost and next + span > tol then again = ceil_div(next + span - tol, lr) end
    return pack(R5, 1, remaining, 0, reset, again)
  end
  local us, part = 0, 0 -- how far the TAT lies ahead of now
  if tat > now then
    if frac == 0 then us = tat - now else us, part = tat - now - 1, lr - frac end
  end
  local tol_us, tol_part = span_of(r, burst)
  local retry, allowed = -1, false
  if cost <= burst then
    local next_us, next_part = pair_add(lr, us, part, span_of(r, cost))
    if pair_le(next_us, next_part, tol_us, tol_part) then
      allowed, retry, us, part = true, 0, next_us, next_part
    else
      retry = ceil_us(pair_sub(lr, next_us, next_part, tol_us, tol_part))
    end
  end
  local left_us, left_part = pair_sub(lr, tol_us, tol_part, us, part)
  local units, rest = muldiv(left_us, lr, wr)
  local remaining, reset = units + idiv(rest + left_part, wr), ceil_us(us, part)
  if not allowed then return pack(R5, 0, remaining, retry, reset, 0) end
  local value
  if part > 0 then
    tat = now + us + 1
    value = int(tat) .. ' ' .. int(lr - part)
  else
    tat = now + us
    value = int(tat)
  end
  if min_ttl == 0 then
    call('SET', key, value, 'PXAT', int(ceil_div(tat, 1000)))
  else
    call('SET', key, value, 'PX', int(max(ceil_div(tat - now, 1000), min_ttl)))
  end
  local again = 0 -- common.lua next_retry: when another call of this cost would pass
  if remaining < cost then
    local next_us, next_part = pair_add(lr, us, part, span_of(r, cost))
    if not pair_le(next_us, next_part, tol_us, tol_part) then
      again = ceil_us(pair_sub(lr, next_us, next_part, tol_us, tol_part))
    end
  end
  return pack(R5, 1, remaining, 0, reset, again)
end
