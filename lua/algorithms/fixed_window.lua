-- Fixed window, as core/algorithms/fixed_window.cpp. State: window index and count.
local algo = { leases = true } -- its slices lease (common.lua lease_call)
local try_call, type = redis.pcall, type

local function count_at(s, r, now)
  if s.window == idiv(now, r.window) then return s.count end
  return 0
end

function algo.empty() return { window = 0, count = 0 } end
-- One limit alone stores window * (limit + 1) + count, one number, while
-- packs() (key schema v3); else, and with several limits,
-- 'window count'.
-- (window + 2) * (limit + 1) < 2^53: the value, and INCRBY on it, stay exact.
local function packs(window, r)
  return (window + 2) * (r.limit + 1) < TWO53
end

local function packed(window, count, r)
  if packs(window, r) then return window * (r.limit + 1) + count end
  return nil
end

-- window, count (and the lease mark, when a lease was granted) of a
-- one-limit value.
local function unpack_value(raw, r)
  local v = tonumber(raw)
  if v == nil then
    local nums = numbers_of(raw)
    return nums[1], nums[2], nums[3]
  end
  local window = idiv(v, r.limit + 1)
  return window, v - window * (r.limit + 1)
end

function algo.decode(nums, pos, r)
  if nums[pos + 1] == nil then -- one limit, packed
    local window = idiv(nums[pos], r.limit + 1)
    return { window = window, count = nums[pos] - window * (r.limit + 1) }, pos + 1
  end
  return { window = nums[pos], count = nums[pos + 1] }, pos + 2
end
-- A state with a lease mark (common.lua appends it) is never packed.
function algo.encode(s, out, r, alone)
  local v = alone and not s.leased_at and packed(s.window, s.count, r)
  if v then
    out[#out + 1] = int(v)
  else
    out[#out + 1] = int(s.window)
    out[#out + 1] = int(s.count)
  end
end

function algo.idle_at(s, r)
  if s.count > 0 then return (s.window + 1) * r.window end
  return 0
end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local window_end = (idiv(now, r.window) + 1) * r.window
  local count = count_at(s, r, now)
  if cost > r.limit then
    v.retry = -1
  elseif count + cost <= r.limit then
    v.allowed = true
    count = count + cost
  else
    v.retry = window_end - now
  end
  v.remaining = r.limit - count
  if count > 0 then v.reset = window_end - now end
  return v
end

-- Moves the state to the window of now: a new window forgets its lease mark.
local function enter(s, r, now)
  local window = idiv(now, r.window)
  if s.window ~= window then s.window, s.count, s.leased_at = window, 0, nil end
end

function algo.consume(s, r, now, cost)
  enter(s, r, now)
  s.count = s.count + cost
end

function algo.refund(s, r, now, cost)
  enter(s, r, now)
  s.count = max(0, s.count - cost)
end

-- A lease's unused units, taken off only in the window and the state the
-- slice was counted in (core/algorithms/fixed_window.cpp give_back).
function algo.give_back(s, r, now, units, granted_at)
  local window = idiv(granted_at, r.window)
  if units <= 0 or s.window ~= window or idiv(now, r.window) ~= window then return false end
  if not s.leased_at or s.leased_at > granted_at or s.count == 0 then return false end
  s.count = max(0, s.count - units)
  return true
end


-- acquire with one limit, the common case, in locals (common.lua decide_one
-- makes tables): the same decision, the same value. While the value is
-- packed, INCRBY (INCR for cost 1) both reads and counts: the call that
-- continues its window is TIME + INCR (the key keeps the expiry of the
-- window's first write); the window's first call SETs the value and its
-- expiry, and a denial DECRBYs (DECRs) back. A value that is not packed
-- is read first (GET, then SET).
function algo.acquire_one(key, r, now, cost, min_ttl, cost_text)
  local width, limit = r.window, r.limit
  -- The window of now, what follows from it alone kept in r until now
  -- leaves it: its end (us), index, first packed value (count 0), whether
  -- it packs, and its end in ms rounded up, as SET's PXAT.
  local ends = r.fw_end
  if ends == nil or now >= ends or now < ends - width then
    local window = idiv(now, width)
    ends = (window + 1) * width
    r.fw_end, r.fw_window, r.fw_first = ends, window, window * (limit + 1)
    r.fw_packs, r.fw_pxat = packs(window, r), int(ceil_div(ends, 1000))
  end
  local window, left = r.fw_window, ends - now
  local count, fresh = 0, true
  -- A value written as a pair (a clock set back across packs()) is no
  -- integer: INCRBY refuses it, and the GET below reads it. INCR for cost
  -- 1: one argument less than INCRBY to make and parse.
  local counted, leased = false, nil -- leased: the value's lease mark, kept in its window
  if cost <= limit and r.fw_packs then
    if cost == 1 then counted = try_call('INCR', key) else counted = try_call('INCRBY', key, cost_text) end
  end
  if type(counted) == 'number' then
    -- old is 0 when the key was missing: INCRBY made it, without an expiry.
    -- Of this window when first <= old <= first + limit (idiv(old, limit + 1)
    -- is the window).
    local old, first = counted - cost, r.fw_first
    if old > 0 and old >= first and old - first <= limit then count, fresh = old - first, false end
    if count + cost > limit then
      if cost == 1 then call('DECR', key) else call('DECRBY', key, cost_text) end
      return pack(R5, 0, limit - count, left, left, 0) -- count > 0 here: reset is left
    end
  else
    local raw = call('GET', key)
    if raw then
      local at, n, mark = unpack_value(raw, r)
      if at == window then count, leased = n, mark end
    end
    if cost > limit or count + cost > limit then
      local reset = 0
      if count > 0 then reset = left end
      local retry = left
      if cost > limit then retry = -1 end
      return pack(R5, 0, limit - count, retry, reset, 0)
    end
    fresh = true
  end
  count = count + cost
  if fresh then
    local value = int(r.fw_first + count)
    if not r.fw_packs or leased then value = int(window) .. ' ' .. int(count) end
    if leased then value = value .. ' ' .. int(leased) end
    if min_ttl ~= 0 then
      call('SET', key, value, 'PX', int(max(ceil_div(left, 1000), min_ttl)))
    else
      call('SET', key, value, 'PXAT', r.fw_pxat)
    end
  end
  local again = 0 -- common.lua next_retry: when another call of this cost would pass
  if count + cost > limit then again = left end
  return pack(R5, 1, limit - count, 0, left, again)
end
